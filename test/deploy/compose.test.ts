import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureCompose } from '../../dev/scripts/lib/tools';
import { scratchDir } from '../../dev/scripts/lib/scratch';
import { loadConfig, paymentsConfigProblem } from '../../platform/config';
import { containerEnv, dockerfileEnv } from './image-env';
import { temporalConnectionOptions } from '../../platform/temporal';

/**
 * docker-compose.yml as README.md and .env.example document it, checked with `docker-compose config`
 * (Compose v2 built from the Go module when none is installed; no Docker engine needed): the env-file
 * template as a new user fills it in, the three worker queues, vendor keys and the catalogue passed
 * through, and every enabled channel of the seeded catalogue pointing at a service that is started.
 */
const run = promisify(execFile);
const ROOT = path.resolve('.');
const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');
const SECRETS = { ADMIN_TOKEN: 'an-admin-token-of-the-test', KEY_ENCRYPTION_KEY: 'ab'.repeat(32) };
const APP_SERVICES = ['gateway', 'worker-media', 'worker-knowledge', 'worker-webhooks', 'seed'];

type Service = { stop_grace_period?: string; ports?: Array<{ target: number; published?: string }>; environment?: Record<string, string | null>; volumes?: Array<{ type: string; source: string; target: string; read_only?: boolean }>; profiles?: string[]; command?: string[]; depends_on?: Record<string, { condition: string; required?: boolean }>; healthcheck?: { test: string[] } };
type ComposeConfig = { services: Record<string, Service> };

let compose = '';
test.before(async () => {
  compose = await ensureCompose(() => undefined);
});

/** `.env.example` as a user fills it in (the two secrets), plus `edit` lines, as the project's .env in a scratch copy of the project directory. */
function projectWith(edit: Record<string, string> = {}): string {
  const dir = scratchDir('compose');
  let env = fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8');
  for (const [k, v] of Object.entries({ ...SECRETS, ...edit })) {
    const line = new RegExp(`^#?\\s*${k}=.*$`, 'm');
    env = line.test(env) ? env.replace(line, `${k}=${v}`) : `${env}\n${k}=${v}\n`;
  }
  fs.writeFileSync(path.join(dir, '.env'), env);
  return dir;
}

async function config(project: string): Promise<ComposeConfig> {
  // A new user's shell: nothing the compose file interpolates (the test stack sets SIMULATOR_URL, for one).
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
  const { stdout } = await run(compose, ['--project-directory', project, '-f', COMPOSE_FILE, 'config', '--format', 'json'], { env, maxBuffer: 16 << 20 });
  return JSON.parse(stdout) as ComposeConfig;
}

/** The catalogue file the app services mount, mapped back from the scratch project to the repository. */
function mountedCatalogue(cfg: ComposeConfig, project: string, service: string): string {
  const mount = cfg.services[service].volumes?.find((v) => v.target === '/app/config/catalogue.json');
  if (!mount) throw new Error(`${service} mounts no catalogue`);
  return path.join(ROOT, path.relative(project, mount.source));
}

/** Every enabled channel's base URL with the service's environment substituted, as the gateway does. */
function channelUrls(catalogueFile: string, env: Record<string, string | null>): Array<{ id: string; url: string }> {
  const catalogue = JSON.parse(fs.readFileSync(catalogueFile, 'utf8')) as { channels: Array<{ id: string; base_url: string; enabled?: boolean }> };
  return catalogue.channels
    .filter((c) => c.enabled !== false)
    .map((c) => ({ id: c.id, url: c.base_url.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => env[name] ?? `<unset ${name}>`) }));
}

test('the documented quick start: .env.example with its two secrets starts the simulator the channels call', async (t) => {
  const project = projectWith();
  const cfg = await config(project);
  t.truthy(cfg.services.simulator, 'COMPOSE_PROFILES=sim in .env.example starts the simulator');
  for (const name of APP_SERVICES) {
    const env = cfg.services[name].environment!;
    t.is(env.ADMIN_TOKEN, SECRETS.ADMIN_TOKEN, name);
    t.is(env.CATALOGUE_FILE, '/app/config/catalogue.json', name);
    t.true(cfg.services[name].volumes!.some((v) => v.target === '/app/config/catalogue.json' && v.read_only), `${name} mounts the catalogue read-only`);
  }
  const catalogue = mountedCatalogue(cfg, project, 'seed');
  t.is(path.relative(ROOT, catalogue), path.join('data', 'catalogue.json'));
  const gatewayEnv = cfg.services.gateway.environment!;
  const urls = channelUrls(catalogue, gatewayEnv);
  t.true(urls.length > 10);
  for (const { id, url } of urls) {
    const host = new URL(url).hostname;
    t.truthy(cfg.services[host], `channel ${id} calls ${url}: ${host} is a started service`);
  }
  t.is(cfg.services.gateway.depends_on!.simulator.required, false, 'the gateway waits for the simulator when it runs');
  t.regex(cfg.services.gateway.healthcheck!.test.join(' '), /\/readyz/);
});

test('three workers, one per queue, each with its own metrics port', async (t) => {
  const cfg = await config(projectWith());
  const ports = new Set<string>();
  for (const queue of ['media', 'knowledge', 'webhooks']) {
    const w = cfg.services[`worker-${queue}`];
    t.deepEqual(w.command, ['worker']);
    t.is(w.environment!.WORKER_QUEUE, queue);
    ports.add(String(w.environment!.METRICS_PORT));
  }
  ports.add(String(cfg.services.gateway.environment!.METRICS_PORT));
  t.is(ports.size, 4);
  t.falsy(cfg.services.worker, 'no queue-less worker');
});

test('real vendors: no simulator, the production catalogue, vendor keys and base URLs reach every process', async (t) => {
  const vendor: Record<string, string> = {};
  const production = JSON.parse(fs.readFileSync(path.join(ROOT, 'deploy/production/catalogue.json'), 'utf8')) as { channels: Array<{ base_url: string; credentials?: { env?: string }; enabled?: boolean }> };
  for (const c of production.channels.filter((c) => c.enabled !== false)) {
    if (c.credentials?.env) vendor[c.credentials.env] = `key-for-${c.credentials.env}`;
    for (const [, name] of c.base_url.matchAll(/\$\{([A-Z0-9_]+)\}/g)) vendor[name] = `https://${name.toLowerCase().replace(/_/g, '-')}.example.com`;
  }
  const project = projectWith({ COMPOSE_PROFILES: '', CATALOGUE_FILE: './deploy/production/catalogue.json', ...vendor });
  const cfg = await config(project);
  t.falsy(cfg.services.simulator);
  for (const name of APP_SERVICES) {
    for (const [k, v] of Object.entries(vendor)) t.is(cfg.services[name].environment![k], v, `${name} gets ${k}`);
    t.false('simulator' in (cfg.services[name].depends_on ?? {}) && cfg.services[name].depends_on!.simulator.required !== false);
  }
  const catalogue = mountedCatalogue(cfg, project, 'gateway');
  t.is(path.relative(ROOT, catalogue), path.join('deploy', 'production', 'catalogue.json'));
  for (const { id, url } of channelUrls(catalogue, cfg.services.gateway.environment!)) {
    t.notRegex(url, /<unset|simulator/, `channel ${id}`);
    t.notThrows(() => new URL(url), `channel ${id}: ${url}`);
  }
});

test('Temporal Cloud settings in .env reach every process (docs/operations.md: "put the variables in .env")', async (t) => {
  const cloud = { TEMPORAL_ADDRESS: 'prod.a1b2c.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'prod.a1b2c', TEMPORAL_API_KEY: 'the-cloud-key' };
  const cfg = await config(projectWith(cloud));
  for (const name of APP_SERVICES) {
    const c = loadConfig(containerEnv(cfg.services[name].environment!));
    t.deepEqual(temporalConnectionOptions(c), { address: cloud.TEMPORAL_ADDRESS, tls: true, apiKey: cloud.TEMPORAL_API_KEY }, name);
    t.is(c.TEMPORAL_NAMESPACE, cloud.TEMPORAL_NAMESPACE, name);
  }
  // Unset: the stack's own Temporal.
  const plain = loadConfig(containerEnv((await config(projectWith())).services.gateway.environment!));
  t.is(plain.TEMPORAL_ADDRESS, 'temporal:7233');
  t.is(plain.TEMPORAL_NAMESPACE, 'default');
});

test('without ADMIN_TOKEN compose refuses, naming the variable and the template', async (t) => {
  const project = projectWith({ ADMIN_TOKEN: '' });
  const err = await t.throwsAsync(config(project));
  t.regex(String((err as { stderr?: string }).stderr ?? err!.message), /ADMIN_TOKEN.*\.env\.example/);
});

test('the quick start\'s gateway starts in production: its compose environment plus the image\'s passes the start checks', async (t) => {
  const cfg = await config(projectWith());
  t.is(dockerfileEnv().NODE_ENV, 'production', 'the Dockerfile\'s ENV was read');
  for (const name of APP_SERVICES) {
    const env = containerEnv(cfg.services[name].environment!);
    // What gateway/server.ts and workers/main.ts do first: loadConfigOrExit, then (the gateway) the payments check.
    const c = loadConfig(env);
    t.is(c.DEPLOYMENT_MODE, 'production', name);
    t.is(paymentsConfigProblem(c), null, `${name}: ${paymentsConfigProblem(c)}`);
  }
  t.false(loadConfig(containerEnv(cfg.services.gateway.environment!)).TOPUPS_ENABLED, 'top-ups are off until Stripe\'s keys are given');

  // Top-ups on with the three values .env.example names: accepted, and each one reaches the gateway.
  const stripe = { TOPUPS_ENABLED: 'true', STRIPE_SECRET_KEY: 'sk_test_abcdefgh', STRIPE_WEBHOOK_SECRET: 'whsec_0123456789abcdef', PUBLIC_BASE_URL: 'https://api.example.com' };
  const on = loadConfig(containerEnv((await config(projectWith(stripe))).services.gateway.environment!));
  t.true(on.TOPUPS_ENABLED);
  t.is(paymentsConfigProblem(on), null);
  t.is(on.PUBLIC_BASE_URL, stripe.PUBLIC_BASE_URL);
  // Top-ups on without the keys: refused, naming them (the gateway's exit 1).
  const bare = loadConfig(containerEnv((await config(projectWith({ TOPUPS_ENABLED: 'true' }))).services.gateway.environment!));
  t.regex(paymentsConfigProblem(bare) ?? '', /STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, PUBLIC_BASE_URL/);
});

test('the media worker (batches run on its queue) sends batch lines to the gateway service, not its own loopback', async (t) => {
  const cfg = await config(projectWith());
  const url = new URL(loadConfig(containerEnv(cfg.services['worker-media'].environment!)).GATEWAY_INTERNAL_URL ?? 'http://127.0.0.1/');
  t.is(url.hostname, 'gateway', 'the gateway service\'s name');
  t.truthy(cfg.services[url.hostname]);
  t.is(url.port, String(loadConfig(containerEnv(cfg.services.gateway.environment!)).PORT), 'the port the gateway listens on in its container');
});

/** A Go duration as compose prints it (`5m0s`, `1m0s`, `90s`), in ms. */
function durationMs(d: string): number {
  let ms = 0;
  for (const [, n, unit] of d.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)) ms += Number(n) * { h: 3_600_000, m: 60_000, s: 1000, ms: 1 }[unit as 'h']!;
  return ms;
}

test('each worker lets running activities finish for SHUTDOWN_GRACE_MS, at least 10 s under its stop_grace_period', async (t) => {
  const cfg = await config(projectWith());
  for (const queue of ['media', 'knowledge', 'webhooks']) {
    const w = cfg.services[`worker-${queue}`];
    const kill = durationMs(w.stop_grace_period ?? '10s'); // compose's default: 10 s
    const grace = loadConfig(containerEnv(w.environment!)).SHUTDOWN_GRACE_MS;
    t.true(grace <= kill - 10_000, `worker-${queue}: SHUTDOWN_GRACE_MS ${grace} against stop_grace_period ${w.stop_grace_period}`);
    t.true(grace >= kill / 2, `worker-${queue}: most of the stop grace goes to running activities (${grace} of ${kill} ms)`);
  }
  const gw = cfg.services.gateway;
  t.true(loadConfig(containerEnv(gw.environment!)).SHUTDOWN_GRACE_MS <= durationMs(gw.stop_grace_period!) - 10_000, 'the gateway drains its journal after the grace');
});
