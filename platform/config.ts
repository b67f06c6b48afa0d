import fs from 'node:fs';
import { z } from 'zod';

/** Where `npm run dev` runs the upstream simulator: the default catalogue's channels call it unless SIMULATOR_URL moves it. */
export const DEFAULT_SIMULATOR_URL = 'http://127.0.0.1:8090';

/** Every environment variable the processes read, parsed once. Documented in README.md. */
const EnvSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  MONGO_URL: z.string().default('mongodb://127.0.0.1:27017/model_gateway'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** Prefix of every Redis key this deployment uses (lets tests share one Redis). */
  REDIS_PREFIX: z.string().default('mg:'),
  /** `host:port,host:port`: seed nodes of a Redis Cluster; when set it is used instead of REDIS_URL. */
  REDIS_CLUSTER_NODES: z.string().regex(/^[^,\s]+:\d+(,[^,\s]+:\d+)*$/, 'REDIS_CLUSTER_NODES must be host:port[,host:port...]').optional(),
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('media'),
  /**
   * TLS to the Temporal frontend (gateway and workers alike, platform/temporal.ts temporalConnectionOptions): `on`/`off`.
   * Unset: on when TEMPORAL_API_KEY or a client certificate is given (Temporal Cloud), else off.
   */
  TEMPORAL_TLS: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['on', 'off', 'true', 'false']).optional()),
  /** mTLS: the client certificate and its private key (PEM files), both or neither. */
  TEMPORAL_TLS_CERT_FILE: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  TEMPORAL_TLS_KEY_FILE: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  /** The CA (PEM) that signed the server's certificate; unset: the system's roots. */
  TEMPORAL_TLS_CA_FILE: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  /** The name the server's certificate is checked against, when it is not TEMPORAL_ADDRESS's host. */
  TEMPORAL_TLS_SERVER_NAME: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  /** Temporal Cloud API key (sent as `Authorization: Bearer`); implies TLS. */
  TEMPORAL_API_KEY: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
  /** Base URL substituted for ${SIMULATOR_URL} in the catalogue's channel URLs. */
  SIMULATOR_URL: z.string().default(DEFAULT_SIMULATOR_URL),
  ADMIN_TOKEN: z.string().min(16, 'ADMIN_TOKEN must be at least 16 characters'),
  /** 32 bytes as 64 hex characters: AES-256-GCM key for stored API keys. */
  KEY_ENCRYPTION_KEY: z.string().regex(/^[0-9a-fA-F]{64}$/, 'KEY_ENCRYPTION_KEY must be 64 hex characters'),
  /**
   * Earlier KEY_ENCRYPTION_KEYs (comma-separated, 64 hex each) whose sealed values are still read until
   * `npm run reseal` has re-sealed them under KEY_ENCRYPTION_KEY (docs/operations.md, key rotation).
   */
  KEY_ENCRYPTION_KEYS_PREVIOUS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[0-9a-fA-F]{64}$/, 'KEY_ENCRYPTION_KEYS_PREVIOUS must be 64-hex keys separated by commas'))),
  /** The 8-character service tag in `sk-<tag>-<64 hex>`. */
  KEY_SERVICE_TAG: z.string().regex(/^[a-z0-9]{8}$/, 'KEY_SERVICE_TAG must be 8 lowercase letters or digits').default('mgateway'),
  /** Key of the HMAC over knowledge-base source links (spec 3 section 2.4); unset: derived from KEY_ENCRYPTION_KEY. */
  KB_LINK_SECRET: z.string().min(32, 'KB_LINK_SECRET must be at least 32 characters').optional(),
  /**
   * Public origin of the gateway (e.g. https://api.example.com): every absolute URL it hands out (signed links, checkout
   * return URLs, MCP) is built from it, never from a request's Host, Origin or X-Forwarded-* headers. Unset: http://HOST:PORT
   * (loopback for 0.0.0.0); production with top-ups needs it.
   */
  PUBLIC_BASE_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  /** Where batch workers send a batch's lines (the gateway itself, so each line is a live call); default http://127.0.0.1:PORT. */
  GATEWAY_INTERNAL_URL: z.url().optional(),
  /** Lines of one batch in flight at once (further bounded by the account's concurrency limit; docs/batches.md). */
  BATCH_LINE_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /** Knowledge compile threads of a worker (docs/knowledge-ingestion.md); unset: 1 on 2 cores or fewer, else cores - 1, at most 4. */
  KB_COMPILE_THREADS: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).max(64).optional()),
  /** Heap cap of each compile thread, in MB: a document past it fails its build instead of the worker. */
  KB_COMPILE_THREAD_MB: z.coerce.number().int().min(64).max(16384).default(256),
  /**
   * Nice value of each compile thread (0-19; 0: as the worker): on a busy machine the worker's event loop
   * (workflow tasks, heartbeats, metrics) gets the CPU before a compile does (docs/knowledge-ingestion.md).
   */
  KB_COMPILE_THREAD_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * Memory budget of each gateway's knowledge search cache in MB: the bases' pages and indexes it keeps,
   * by their estimated size, least recently searched dropped first (capabilities/knowledge/corpus.ts, docs/knowledge.md).
   */
  KB_SEARCH_CACHE_MB: z.coerce.number().int().min(1).max(65536).default(256),
  CATALOGUE_FILE: z.string().default('data/catalogue.json'),
  /** A prebuilt workflow bundle (dev/scripts/bundle-workflows.ts); unset: the worker bundles workflows/ at start. */
  WORKFLOW_BUNDLE: z.string().optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /**
   * What a chat call does while its key's fresh state is read (gateway/middleware/auth.ts, docs/wallet.md):
   * `prepare` parses, validates and routes the body on the key's last known state and calls upstream only
   * once the fresh state admits the call; `upstream` sends the upstream call too when that state's balance
   * covers twice the pre-charge estimate (a refusal stops it; the guess follows what this process changes,
   * so only a change another process made in its last seconds can cost a stopped upstream call, where spec
   * 1 section 8 wants none on a pre-charge 402; a stream that answered meanwhile is read ahead, so a cut
   * loses nothing: platform/read-ahead.ts); `off` waits first.
   */
  CHAT_AUTH_OVERLAP: z.enum(['off', 'prepare', 'upstream']).default('prepare'),
  /**
   * The gateway's old-generation growth past its last full collection, in percent; unset, the gateway
   * picks it from the heap's cap (platform/heap.ts `heapGrowingPercent`, which has the rule and its figures).
   */
  GATEWAY_HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(300).optional(),
  /**
   * SIGTERM: how long a gateway lets in-flight requests (streams) finish before it closes them (each is then
   * billed as a disconnect), and how long a worker lets running activities finish (Worker shutdownGraceTime).
   * Keep it under the orchestrator's kill delay (Kubernetes terminationGracePeriodSeconds, 30 s by default).
   */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(25_000),
  /** Upstream timeout of the four chat endpoints, streaming included. */
  CHAT_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().positive().default(180_000),
  /** Keep-alive connections per upstream origin; an open stream holds one for its whole life. */
  UPSTREAM_CONNECTIONS: z.coerce.number().int().positive().default(4096),
  /** Overrides every media family's poll cadence (tests use a short one). */
  MEDIA_POLL_INTERVAL_MS: z.coerce.number().int().positive().optional(),
  /** Sync image calls send headers and keep-alive whitespace after this long (spec 2 section 4.2: 90 s). */
  IMAGE_SYNC_KEEPALIVE_MS: z.coerce.number().int().positive().default(90_000),
  /** Overrides the run limit of the families that have one (images: 280 s, domain/media/cadence.ts); tests use a short one. */
  MEDIA_MAX_RUN_MS: z.coerce.number().int().positive().optional(),
  /** A request body that sends nothing for this long is refused (408) and its connection closed (slow-loris uploads). */
  BODY_IDLE_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
  /** A request body not complete after this long is refused (408) and its connection closed, however it trickles. */
  BODY_READ_TIMEOUT_MS: z.coerce.number().int().positive().default(300_000),
  /** Idempotent answers larger than this are not kept (spec 2 section 4.1 rule 8); default 1 MiB (gateway/middleware/idempotency.ts). */
  IDEMPOTENCY_MAX_CACHED_BODY_BYTES: z.coerce.number().int().positive().optional(),
  /** Agents: the platform default model, used when neither the agent nor its enterprise names one (spec 3 section 2.5). */
  AGENT_DEFAULT_MODEL: z.string().min(1).default('gpt-5-mini'),
  /** Agents: the token budget of the knowledge-base pages injected into each call (bytes / 4, as the pre-charge estimate). */
  AGENT_CONTEXT_TOKENS: z.coerce.number().int().min(0).default(2000),
  /** Agents: how many search hits are considered for injection. */
  AGENT_CONTEXT_PAGES: z.coerce.number().int().min(1).max(50).default(5),
  /** Agents: how long a call may reuse the creator's readable bases (0: read them on every call). */
  AGENT_SCOPE_CACHE_MS: z.coerce.number().int().min(0).default(1000),
  /** The key sent upstream to channels whose `api_key_env` is UPSTREAM_API_KEY (every seeded channel). */
  UPSTREAM_API_KEY: z.string().min(1).default('gateway'),
  /** Consecutive failures (5xx, timeouts, connection errors) that open a channel's circuit breaker (docs/channels.md). */
  CHANNEL_BREAKER_FAILURES: z.coerce.number().int().min(1).default(10),
  /** How long an open breaker keeps its channel behind the healthy ones before a probe may try it. */
  CHANNEL_BREAKER_COOLDOWN_MS: z.coerce.number().int().positive().default(30_000),
  /** How often each process checks the channel version in Redis (a missed change message is caught then). */
  CATALOGUE_POLL_MS: z.coerce.number().int().positive().default(2_000),
  /** Test-only crash points, comma-separated (platform/failpoints.ts). */
  FAILPOINTS: z.string().default('').transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
  /** The Temporal web UI, for the console's links from a task to its workflow (operators only). */
  TEMPORAL_UI_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  /**
   * production (the default): task callback URLs must be https to a public address; development and test:
   * http is also allowed, and loopback hosts too (never private or link-local ones). docs/webhooks.md.
   */
  DEPLOYMENT_MODE: z.enum(['production', 'development', 'test']).default('production'),
  /** Task webhooks: how long one delivery attempt may take (connect, send, answer). */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** Task webhooks: the first retry interval; each next one doubles, up to WEBHOOK_RETRY_MAX_INTERVAL_MS. */
  WEBHOOK_RETRY_INITIAL_MS: z.coerce.number().int().positive().default(5_000),
  WEBHOOK_RETRY_MAX_INTERVAL_MS: z.coerce.number().int().positive().default(3_600_000),
  /** Task webhooks: how long a delivery keeps being retried (24 h). */
  WEBHOOK_RETRY_WINDOW_MS: z.coerce.number().int().positive().default(86_400_000),
  /** Task webhooks: DNS servers (`host[:port]`, comma-separated) resolving callback hosts at delivery; unset: the system resolver. */
  WEBHOOK_DNS_SERVERS: z.string().default('').transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
  /** Prometheus `/metrics` on its own listener (docs/observability.md); unset: metrics are off and cost nothing. Gateway and worker each take their own. */
  METRICS_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).max(65535).optional()),
  /** Interface of the metrics listener: loopback by default; a scraper on another host needs 0.0.0.0 (and a firewall). */
  METRICS_HOST: z.string().default('127.0.0.1'),
  /**
   * Top-ups (docs/payments.md): on by default. In production they go through Stripe and need STRIPE_SECRET_KEY,
   * STRIPE_WEBHOOK_SECRET and PUBLIC_BASE_URL (the gateway refuses to start without them); `false` turns top-ups off.
   */
  TOPUPS_ENABLED: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Stripe's secret API key (`sk_live_...`, `sk_test_...`); unset in development and test: the stand-in processor. */
  STRIPE_SECRET_KEY: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(8).optional()),
  /** The signing secret of the Stripe webhook endpoint (`whsec_...`); unset in development and test: derived from ADMIN_TOKEN. */
  STRIPE_WEBHOOK_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16).optional()),
  /** Another Stripe API host (stripe-mock: `http://127.0.0.1:12111`); unset: api.stripe.com. */
  STRIPE_API_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  /** The worker's queue when `workers/main.ts` gets no `--queue=` flag: media, knowledge or webhooks (domain/task-queues.ts); unset: media. */
  WORKER_QUEUE: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['media', 'knowledge', 'webhooks']).optional()),
  /** Override the worker's slot counts (workers/queues.ts has each queue's defaults and why). */
  WORKER_MAX_ACTIVITIES: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).optional()),
  WORKER_MAX_WORKFLOW_TASKS: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(2).optional()),
  WORKER_MAX_LOCAL_ACTIVITIES: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).optional()),
}).superRefine((env, ctx) => {
  // Temporal TLS: contradictions and unreadable files refuse the start here, naming the variable, not at the first connection.
  const tlsOff = env.TEMPORAL_TLS === 'off' || env.TEMPORAL_TLS === 'false';
  if ((env.TEMPORAL_TLS_CERT_FILE === undefined) !== (env.TEMPORAL_TLS_KEY_FILE === undefined)) {
    const given = env.TEMPORAL_TLS_CERT_FILE === undefined ? 'TEMPORAL_TLS_KEY_FILE' : 'TEMPORAL_TLS_CERT_FILE';
    const other = given === 'TEMPORAL_TLS_KEY_FILE' ? 'TEMPORAL_TLS_CERT_FILE' : 'TEMPORAL_TLS_KEY_FILE';
    ctx.addIssue({ code: 'custom', path: [other], message: `needed with ${given} (a client certificate is the pair)` });
  }
  if (tlsOff && env.TEMPORAL_API_KEY) ctx.addIssue({ code: 'custom', path: ['TEMPORAL_TLS'], message: 'is off, but TEMPORAL_API_KEY implies TLS (unset TEMPORAL_TLS or set it on)' });
  for (const name of ['TEMPORAL_TLS_CERT_FILE', 'TEMPORAL_TLS_KEY_FILE', 'TEMPORAL_TLS_CA_FILE'] as const) {
    const file = env[name];
    if (file === undefined) continue;
    if (tlsOff) {
      ctx.addIssue({ code: 'custom', path: [name], message: `is set, but TEMPORAL_TLS is off` });
      continue;
    }
    try {
      fs.accessSync(file, fs.constants.R_OK);
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: [name], message: `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})` });
    }
  }
});

/** A channel's `api_key_env` must name a variable of this form; its value is read here, once, with the rest. */
const UPSTREAM_KEY_VAR = /^[A-Z][A-Z0-9_]*_API_KEY$/;

/** A channel's `base_url` may start with `${NAME}` for a variable of this form (or SIMULATOR_URL). */
const CHANNEL_URL_VAR = /^[A-Z][A-Z0-9_]*_BASE_URL$/;

export type Config = z.infer<typeof EnvSchema> & {
  /** Every `*_API_KEY` variable of the environment, by name: the upstream keys channels may name. */
  UPSTREAM_KEYS: Readonly<Record<string, string>>;
  /** `${VAR}` values of channel URLs: SIMULATOR_URL and every `*_BASE_URL` variable of the environment. */
  CHANNEL_URL_VARS: Readonly<Record<string, string>>;
};

/**
 * THE resolver of a channel's secret: every upstream call (chat, the knowledge
 * compiler's LLM calls, channel test calls, media providers, music and clip
 * templates) gets its key here and nowhere else. The key is the channel's
 * stored secret (unsealed when the catalogue loads), else the variable its
 * `api_key_env` names (read once, with the rest of the configuration: never
 * `process.env` at call time), else 'gateway' (the simulator accepts any).
 */
export function upstreamApiKey(config: Pick<Config, 'UPSTREAM_KEYS'>, channel: { api_key_env?: string | null; api_key?: string }): string {
  return channel.api_key || (channel.api_key_env && config.UPSTREAM_KEYS[channel.api_key_env]) || 'gateway';
}

/** The gateway's public origin, without a trailing slash: PUBLIC_BASE_URL, else the address it listens on. */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>): string {
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' || config.HOST === '' ? '127.0.0.1' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}

/**
 * What a production gateway with top-ups lacks to take payments (the variables by name), or null.
 * Development and test fall back to the stand-in processor (dev/simulator/payments/).
 */
export function paymentsConfigProblem(config: Pick<Config, 'DEPLOYMENT_MODE' | 'TOPUPS_ENABLED' | 'STRIPE_SECRET_KEY' | 'STRIPE_WEBHOOK_SECRET' | 'PUBLIC_BASE_URL'>): string | null {
  if (config.DEPLOYMENT_MODE !== 'production' || !config.TOPUPS_ENABLED) return null;
  const missing = (['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'PUBLIC_BASE_URL'] as const).filter((name) => !config[name]);
  if (missing.length === 0) return null;
  return `top-ups are enabled in production (DEPLOYMENT_MODE=production, TOPUPS_ENABLED=true) but ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set: ` +
    'set them to take payments through Stripe (docs/payments.md), or set TOPUPS_ENABLED=false to run without top-ups';
}

/** A variable is missing or malformed: the message names each one (no stack is worth showing). */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    // One problem: one line (a log collector keeps it whole); several: one line each.
    super(problems.length === 1 ? `invalid configuration: ${problems[0]}` : `invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => {
        const name = i.path.join('.');
        return env[name] === undefined ? `${name} is not set (${REQUIRED_HINTS[name] ?? i.message}; README.md, "Configuration")` : `${name}: ${i.message}`;
      }),
    );
  }
  const keys: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (UPSTREAM_KEY_VAR.test(name) && value) keys[name] = value;
  keys.UPSTREAM_API_KEY = parsed.data.UPSTREAM_API_KEY;
  const urls: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (CHANNEL_URL_VAR.test(name) && value) urls[name] = value.replace(/\/+$/, '');
  urls.SIMULATOR_URL = parsed.data.SIMULATOR_URL;
  return { ...parsed.data, UPSTREAM_KEYS: keys, CHANNEL_URL_VARS: urls };
}

const REQUIRED_HINTS: Record<string, string> = {
  ADMIN_TOKEN: 'the management API\'s bearer token, 16+ characters, e.g. `openssl rand -hex 24`',
  KEY_ENCRYPTION_KEY: 'the key that seals stored secrets, 64 hex characters, e.g. `openssl rand -hex 32`',
};

/**
 * loadConfig for a process's entry point: a bad or missing variable prints the message naming it on
 * stderr and exits 1, without a stack trace.
 */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env, what = 'the process'): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${what} cannot start: ${err.message}\n`);
    process.exit(1);
  }
}

/**
 * Tracing (platform/tracing/) reads the standard OpenTelemetry variables: it is on when
 * an exporter is named (`OTEL_TRACES_EXPORTER` other than `none`) or an OTLP
 * endpoint is set, and OTEL_SDK_DISABLED is not `true`. The SDK itself reads
 * the rest of the OTEL_* variables (protocol, headers, sampler, resource).
 */
const TracingEnvSchema = z.object({
  OTEL_SDK_DISABLED: z.string().optional(),
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
});

export function tracingWanted(env: Record<string, string | undefined> = process.env): { on: boolean; serviceName?: string } {
  const e = TracingEnvSchema.parse(env);
  if (e.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { on: false };
  const exporters = (e.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim()).filter((s) => s && s !== 'none');
  const on = exporters.length > 0 || !!e.OTEL_EXPORTER_OTLP_ENDPOINT || !!e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return { on: on && e.OTEL_TRACES_EXPORTER?.trim() !== 'none', serviceName: e.OTEL_SERVICE_NAME };
}

/** The crash points of this process (the failpoint module reads them before any Config is built). */
export function activeFailpoints(env: Record<string, string | undefined> = process.env): string[] {
  return EnvSchema.shape.FAILPOINTS.parse(env.FAILPOINTS);
}
