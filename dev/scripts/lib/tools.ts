// Builds the stack's external binaries once per machine and user, outside the
// clone: ${XDG_CACHE_HOME:-$HOME/.cache}/model-gateway/tools/<name>-<version>/.
// A fresh clone (CI) on the same machine reuses them; a lock file keeps two
// concurrent runs from building the same tool twice. Only the Go module proxy
// and Debian's apt are contacted, and only when something is missing.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const TEMPORAL_VERSION = '1.5.1';
export const FERRETDB_VERSION = '1.24.2';
/** Stripe's API mock (docs/payments.md): the payments tests and `npm run dev` talk to it instead of api.stripe.com. */
export const STRIPE_MOCK_VERSION = '0.203.0';
/** Helm (deploy/helm's checks) and Compose v2 (docker-compose.yml's check), built from the Go module proxy like the rest. */
export const HELM_VERSION = '3.22.0';
export const COMPOSE_VERSION = '2.40.3';

export type ToolName = 'temporal' | 'ferretdb' | 'redis' | 'stripeMock';

export interface Tools {
  temporal?: string;
  ferretdb?: string;
  redisServer?: string;
  stripeMock?: string;
}

export interface EnsureToolsOptions {
  /** Which tools are needed; default all (stripe-mock only when asked for). */
  need?: Partial<Record<ToolName, boolean>>;
  log?: (line: string) => void;
}

export function toolsCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'model-gateway', 'tools');
}

export function temporalBinary(): string {
  return path.join(toolsCacheDir(), `temporal-${TEMPORAL_VERSION}`, 'temporal');
}

/**
 * Our changes to FerretDB's source before the build (the binary's directory
 * names them, so a cached build of fewer changes is never taken for this one).
 * Only the dev/test store is affected (production runs MongoDB).
 *
 * `p1`: FerretDB v1's SQLite backend looks documents up by `_id` (finds,
 * updates, replaces and deletes with an `{_id: <string or ObjectId>}`
 * filter) with `WHERE _ferretdb_sjson->'$._id' = ?`, but its unique `_id`
 * index is on `_ferretdb_sjson->"_id"`; SQLite uses an index on an expression
 * only for that same expression, so every one of those reads the whole table
 * (about 10 µs a document: 100 ms at 10,000). Both expressions name the same
 * value; the lookup is made to use the index's (`->'_id'`, which SQLite reads
 * as `$._id` as well). `EXPLAIN QUERY PLAN`: `SCAN t` before, `SEARCH t USING
 * INDEX` after.
 *
 * `p2`: an `update` or `findAndModify` kept its query's SQL rows open while it
 * wrote, and `update` kept every statement's open until the whole command was
 * done; the SQLite pool has 100 connections, which every client shares. One
 * `bulkWrite` of 100 `updateOne`s (a knowledge base's relink writes them so)
 * took all 100 and then waited for a 101st to write: the whole store stopped,
 * for every process, until FerretDB was killed (seen 2026-11-30: 100 open
 * rows, 57 commands waiting for a connection, 22 minutes). Many concurrent
 * single updates could do the same. Each statement now reads its matches and
 * gives the connection back before it writes (`iterator.ConsumeValues` closes
 * the query; a statement matches one document, or what `multi` names), then
 * updates them from a slice (closed with the command's other iterators:
 * FerretDB panics on an iterator collected unclosed).
 * Test: test/foundation/ferretdb-writes.test.ts.
 */
export const FERRETDB_PATCH = 'p2';
const FERRETDB_EDITS: ReadonlyArray<{ file: string; from: string; to: string }> = [
  { file: 'internal/backends/sqlite/metadata/metadata.go', from: `IDColumn = DefaultColumn + "->'$._id'"`, to: `IDColumn = DefaultColumn + "->'_id'"` },
  {
    file: 'internal/handler/msg_update.go',
    from: `\t\tresult, err := common.UpdateDocument(ctx, c, "update", iter, &u)\n`,
    to:
      `\t\tmatches, err := iterator.ConsumeValues(iter)\n` +
      `\t\tcloser.Close()\n` +
      `\t\tif err != nil {\n\t\t\treturn 0, 0, nil, lazyerrors.Error(err)\n\t\t}\n\n` +
      `\t\tstatementIter := iterator.Values(iterator.ForSlice(matches))\n` +
      `\t\tcloser.Add(statementIter)\n\n` +
      `\t\tresult, err := common.UpdateDocument(ctx, c, "update", statementIter, &u)\n`,
  },
  {
    file: 'internal/handler/msg_findandmodify.go',
    from: `\titer = common.LimitIterator(iter, closer, 1)\n`,
    to:
      `\titer = common.LimitIterator(iter, closer, 1)\n\n` +
      `\tmatches, err := iterator.ConsumeValues(iter)\n` +
      `\tqueryRes.Iter.Close()\n` +
      `\tif err != nil {\n\t\treturn nil, lazyerrors.Error(err)\n\t}\n\n` +
      `\titer = iterator.Values(iterator.ForSlice(matches))\n` +
      `\tcloser.Add(iter)\n`,
  },
];

export function ferretdbBinary(): string {
  return path.join(toolsCacheDir(), `ferretdb-${FERRETDB_VERSION}-${FERRETDB_PATCH}`, 'ferretdb');
}

/** Environment for every `go` call: no telemetry, no toolchain download. */
function goEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GOTELEMETRY: 'off',
    GOTOOLCHAIN: 'local',
    GOFLAGS: '-buildvcs=false',
    ...extra,
  };
}

const memo = new Map<ToolName, Promise<string>>();

export async function ensureTools(opts: EnsureToolsOptions = {}): Promise<Tools> {
  const need = { temporal: true, ferretdb: true, redis: true, ...opts.need };
  const log = opts.log ?? ((line: string) => console.log(line));
  const once = (name: ToolName, make: () => Promise<string>) => {
    let p = memo.get(name);
    if (!p) {
      p = make();
      memo.set(name, p);
      p.catch(() => memo.delete(name));
    }
    return p;
  };
  // Sequential on purpose: two Go builds at once on 2 cores is no faster.
  const tools: Tools = {};
  if (need.redis) tools.redisServer = await once('redis', () => ensureRedis(log));
  if (need.ferretdb) tools.ferretdb = await once('ferretdb', () => ensureFerretDB(log));
  if (need.temporal) tools.temporal = await once('temporal', () => ensureTemporal(log));
  if (need.stripeMock) tools.stripeMock = await once('stripeMock', () => ensureStripeMock(log));
  return tools;
}

// ---------------------------------------------------------------- stripe-mock

export function stripeMockBinary(): string {
  return path.join(toolsCacheDir(), `stripe-mock-${STRIPE_MOCK_VERSION}`, 'stripe-mock');
}

/** `go install github.com/stripe/stripe-mock@v…` (its OpenAPI spec and fixtures are embedded in the binary). */
export async function ensureStripeMock(log: (l: string) => void = console.log): Promise<string> {
  const bin = stripeMockBinary();
  return cachedBuild('stripe-mock', STRIPE_MOCK_VERSION, bin, log, async (stage) => {
    requireGo();
    await run('go', ['install', `github.com/stripe/stripe-mock@v${STRIPE_MOCK_VERSION}`], {
      cwd: stage,
      env: goEnv({ GOBIN: stage }),
      log,
      label: 'stripe-mock',
    });
    return path.join(stage, 'stripe-mock');
  });
}

// ---------------------------------------------------------------- temporal

async function ensureTemporal(log: (l: string) => void): Promise<string> {
  const bin = temporalBinary();
  return cachedBuild('temporal', TEMPORAL_VERSION, bin, log, async (stage) => {
    requireGo();
    const ldflags = `-X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_VERSION}`; // else it says 0.0.0-DEV
    await run('go', ['install', '-ldflags', ldflags, `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_VERSION}`], {
      cwd: stage,
      env: goEnv({ GOBIN: stage }),
      log,
      label: 'temporal',
    });
    return path.join(stage, 'temporal');
  });
}

// ---------------------------------------------------------------- helm + docker-compose

export function helmBinary(): string {
  return path.join(toolsCacheDir(), `helm-${HELM_VERSION}`, 'helm');
}

export function composeBinary(): string {
  return path.join(toolsCacheDir(), `docker-compose-${COMPOSE_VERSION}`, 'docker-compose');
}

/** `helm` for the chart checks (test/deploy/helm.test.ts); built once, cached like the Temporal CLI. */
export async function ensureHelm(log: (l: string) => void = console.log): Promise<string> {
  const bin = helmBinary();
  return cachedBuild('helm', HELM_VERSION, bin, log, async (stage) => {
    requireGo();
    const ldflags = `-X helm.sh/helm/v3/internal/version.version=v${HELM_VERSION}`;
    await run('go', ['install', '-ldflags', ldflags, `helm.sh/helm/v3/cmd/helm@v${HELM_VERSION}`], {
      cwd: stage, env: goEnv({ GOBIN: stage }), log, label: 'helm',
    });
    return path.join(stage, 'helm');
  }, ['version', '--short']);
}

/**
 * A `docker-compose` on the PATH, else Compose v2's standalone binary built from the Go module
 * (only `docker-compose config` is used here: it needs no Docker engine).
 */
export async function ensureCompose(log: (l: string) => void = console.log): Promise<string> {
  const found = which('docker-compose');
  if (found) return found;
  const bin = composeBinary();
  return cachedBuild('docker-compose', COMPOSE_VERSION, bin, log, async (stage) => {
    requireGo();
    // `go install ...@version` refuses a module whose go.mod has exclude directives (Compose's has): build a copy.
    const mod = `github.com/docker/compose/v2@v${COMPOSE_VERSION}`;
    const out = await run('go', ['mod', 'download', '-json', mod], { cwd: stage, env: goEnv(), log, label: 'docker-compose', capture: true });
    const dir = (JSON.parse(out) as { Dir?: string }).Dir;
    if (!dir) throw new Error(`go mod download ${mod} gave no Dir: ${out}`);
    const src = path.join(stage, 'src');
    fs.cpSync(dir, src, { recursive: true });
    makeWritable(src);
    const target = path.join(stage, 'docker-compose');
    const ldflags = `-X github.com/docker/compose/v2/internal.Version=v${COMPOSE_VERSION}`;
    await run('go', ['build', '-trimpath', '-ldflags', ldflags, '-o', target, './cmd'], {
      cwd: src, env: goEnv({ GOFLAGS: '-mod=mod -buildvcs=false' }), log, label: 'docker-compose',
    });
    return target;
  }, ['version']);
}

/** The Kubernetes schemas the chart's rendered manifests are validated against, offline (PyPI `kubernetes-validate`). */
export const KUBERNETES_VALIDATE_VERSION = '1.37.0';

/** `kubernetes-validate` in its own virtualenv under the tools cache (python3 -m venv + pip, once). */
export async function ensureKubernetesValidate(log: (l: string) => void = console.log): Promise<string> {
  const venv = path.join(toolsCacheDir(), `kubernetes-validate-${KUBERNETES_VALIDATE_VERSION}`);
  const bin = path.join(venv, 'bin', 'kubernetes-validate');
  if (works(bin)) return bin;
  fs.mkdirSync(toolsCacheDir(), { recursive: true });
  return withLock(`${venv}.lock`, log, 'kubernetes-validate install', async () => {
    if (works(bin)) return bin;
    const python = which('python3');
    if (!python) throw new Error('python3 is missing: the chart check installs kubernetes-validate from PyPI into a virtualenv');
    fs.rmSync(venv, { recursive: true, force: true });
    log(`tools: installing kubernetes-validate ${KUBERNETES_VALIDATE_VERSION} into ${venv}…`);
    await run(python, ['-m', 'venv', venv], { log, label: 'venv' });
    await run(path.join(venv, 'bin', 'pip'), ['install', '-q', '--disable-pip-version-check', `kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}`], { log, label: 'pip' });
    if (!works(bin)) throw new Error(`pip installed kubernetes-validate but \`${bin} --version\` fails`);
    return bin;
  });
}

// ---------------------------------------------------------------- ferretdb

async function ensureFerretDB(log: (l: string) => void): Promise<string> {
  const bin = ferretdbBinary();
  return cachedBuild('ferretdb', `${FERRETDB_VERSION}-${FERRETDB_PATCH}`, bin, log, async (stage) => {
    requireGo();
    // `go install ...@v1.24.2` needs the module's version list, which the
    // proxy refuses here (403); downloading the exact version works.
    const mod = `github.com/FerretDB/FerretDB@v${FERRETDB_VERSION}`;
    const out = await run('go', ['mod', 'download', '-json', mod], {
      cwd: stage,
      env: goEnv(),
      log,
      label: 'ferretdb',
      capture: true,
    });
    const dir = (JSON.parse(out) as { Dir?: string; Error?: string }).Dir;
    if (!dir) throw new Error(`go mod download ${mod} gave no Dir: ${out}`);
    // The module cache is read-only and lacks build/version/version.txt, which
    // the binary needs at start (it panics without it): build from a copy.
    const src = path.join(stage, 'src');
    fs.cpSync(dir, src, { recursive: true });
    makeWritable(src);
    for (const edit of FERRETDB_EDITS) {
      const file = path.join(src, edit.file);
      const code = fs.readFileSync(file, 'utf8');
      if (code.split(edit.from).length !== 2) throw new Error(`ferretdb: ${edit.file} does not hold \`${edit.from.trim()}\` exactly once: review FERRETDB_PATCH`);
      fs.writeFileSync(file, code.replace(edit.from, edit.to));
    }
    fs.writeFileSync(path.join(src, 'build/version/version.txt'), `v${FERRETDB_VERSION}\n`);
    fs.writeFileSync(path.join(src, 'build/version/package.txt'), 'source\n');
    const target = path.join(stage, 'ferretdb');
    await run('go', ['build', '-trimpath', '-o', target, './cmd/ferretdb'], {
      cwd: src,
      env: goEnv({ GOFLAGS: '-mod=mod -buildvcs=false' }),
      log,
      label: 'ferretdb',
    });
    return target;
  });
}

function makeWritable(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) makeWritable(p);
    else if (entry.isFile()) fs.chmodSync(p, 0o644);
  }
}

// ---------------------------------------------------------------- redis

async function ensureRedis(log: (l: string) => void): Promise<string> {
  const found = which('redis-server');
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error('redis-server is missing: install it with `sudo apt-get install -y redis-server`, or set REDIS_URL');
  }
  const lockFile = path.join(toolsCacheDir(), 'apt-redis-server.lock');
  return withLock(lockFile, log, 'redis-server install', async () => {
    const again = which('redis-server');
    if (again) return again;
    log('tools: redis-server missing, installing Debian package redis-server (apt-get)…');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update', '-q'], { env, log, label: 'apt' });
    await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'redis-server'], { env, log, label: 'apt' });
    const bin = which('redis-server');
    if (!bin) throw new Error('apt-get installed redis-server but it is not on PATH');
    log(`tools: redis-server installed at ${bin}`);
    return bin;
  });
}

// ---------------------------------------------------------------- chromium

/**
 * Debian's chromium for the console's browser tests (playwright-core drives
 * it; Playwright's own browser download is not used). Installed with apt-get
 * when missing, as redis-server is. CHROMIUM_PATH overrides the lookup.
 */
export async function ensureChromium(log: (l: string) => void = console.log): Promise<string> {
  const given = process.env.CHROMIUM_PATH;
  if (given) return given;
  const found = which('chromium');
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error('chromium is missing: install it with `sudo apt-get install -y chromium`, or set CHROMIUM_PATH');
  }
  const lockFile = path.join(toolsCacheDir(), 'apt-chromium.lock');
  fs.mkdirSync(toolsCacheDir(), { recursive: true });
  return withLock(lockFile, log, 'chromium install', async () => {
    const again = which('chromium');
    if (again) return again;
    log('tools: chromium missing, installing Debian package chromium (apt-get)…');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update', '-q'], { env, log, label: 'apt' });
    await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'chromium'], { env, log, label: 'apt' });
    const bin = which('chromium');
    if (!bin) throw new Error('apt-get installed chromium but it is not on PATH');
    log(`tools: chromium installed at ${bin}`);
    return bin;
  });
}

function which(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/sbin', '/usr/local/bin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

function requireGo(): void {
  if (!which('go')) {
    throw new Error('go is not installed: the Temporal CLI and FerretDB are built from source with the Go toolchain');
  }
  // Persistently opt out of Go telemetry for this user (a local file; no network).
  spawnSync('go', ['telemetry', 'off'], { env: goEnv(), stdio: 'ignore' });
}

// ---------------------------------------------------------------- cache + lock

/** A cached binary counts only if it runs: `--version` must exit 0. */
function works(bin: string, probe: string[] = ['--version']): boolean {
  if (!fs.existsSync(bin)) return false;
  const r = spawnSync(bin, probe, { stdio: 'ignore', timeout: 15_000 });
  return r.status === 0;
}

async function cachedBuild(
  name: string,
  version: string,
  bin: string,
  log: (l: string) => void,
  build: (stage: string) => Promise<string>,
  probe?: string[],
): Promise<string> {
  if (works(bin, probe)) return bin;
  const dir = path.dirname(bin);
  fs.mkdirSync(dir, { recursive: true });
  return withLock(`${dir}.lock`, log, `${name} ${version} build`, async () => {
    if (works(bin, probe)) return bin; // built by the run we waited for
    const started = Date.now();
    log(`tools: building ${name} ${version} into ${dir} (takes a few minutes the first time)…`);
    const stage = fs.mkdtempSync(path.join(dir, '.build-'));
    try {
      const built = await build(stage);
      if (!works(built, probe)) throw new Error(`${name} was built but \`${built} ${(probe ?? ['--version']).join(' ')}\` fails`);
      fs.renameSync(built, bin); // atomic: never a half-written binary at `bin`
    } finally {
      fs.rmSync(stage, { recursive: true, force: true });
    }
    log(`tools: ${name} ${version} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return bin;
  });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function withLock<T>(lockFile: string, log: (l: string) => void, what: string, fn: () => Promise<T>): Promise<T> {
  fs.mkdirSync(path.dirname(lockFile), { recursive: true });
  let announced = false;
  for (;;) {
    try {
      const fd = fs.openSync(lockFile, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number.parseInt(safeRead(lockFile), 10);
      if (!Number.isFinite(holder) || !pidAlive(holder)) {
        // Left by a run that died (or is just being written: give it a moment).
        await sleep(200);
        if (safeRead(lockFile) === (Number.isFinite(holder) ? String(holder) : '')) {
          fs.rmSync(lockFile, { force: true });
        }
        continue;
      }
      if (!announced) {
        log(`tools: waiting for ${what} in another process (pid ${holder}, lock ${lockFile})…`);
        announced = true;
      }
      await sleep(1000);
    }
  }
  try {
    return await fn();
  } finally {
    if (safeRead(lockFile) === String(process.pid)) fs.rmSync(lockFile, { force: true });
  }
}

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------- subprocess

interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  log: (l: string) => void;
  label: string;
  /** Return stdout instead of echoing it. */
  capture?: boolean;
}

/** Runs a command, echoing its output as progress lines; rejects on failure. */
function run(cmd: string, args: string[], opts: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const tail: string[] = [];
    const echo = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        tail.push(line);
        if (tail.length > 30) tail.shift();
        opts.log(`  [${opts.label}] ${line}`);
      }
    };
    child.stdout.on('data', (chunk: Buffer) => (opts.capture ? (stdout += chunk.toString()) : echo(chunk)));
    child.stderr.on('data', echo);
    // A heartbeat, since `go build` is silent for minutes at a time.
    const started = Date.now();
    const beat = setInterval(() => {
      opts.log(`  [${opts.label}] still running \`${cmd} ${args[0]}\` (${Math.round((Date.now() - started) / 1000)} s)…`);
    }, 30_000);
    child.on('error', (err) => {
      clearInterval(beat);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearInterval(beat);
      if (code === 0) resolve(stdout);
      else reject(new Error(`\`${cmd} ${args.join(' ')}\` failed (${signal ?? `exit ${code}`})\n${stdout}${tail.join('\n')}`));
    });
  });
}
