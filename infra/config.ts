import { z } from 'zod';

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
  /** Base URL substituted for ${SIMULATOR_URL} in the catalogue's channel URLs. */
  SIMULATOR_URL: z.string().default('http://127.0.0.1:8090'),
  ADMIN_TOKEN: z.string().min(16, 'ADMIN_TOKEN must be at least 16 characters'),
  /** 32 bytes as 64 hex characters: AES-256-GCM key for stored API keys. */
  KEY_ENCRYPTION_KEY: z.string().regex(/^[0-9a-fA-F]{64}$/, 'KEY_ENCRYPTION_KEY must be 64 hex characters'),
  /** The 8-character service tag in `sk-<tag>-<64 hex>`. */
  KEY_SERVICE_TAG: z.string().regex(/^[a-z0-9]{8}$/, 'KEY_SERVICE_TAG must be 8 lowercase letters or digits').default('mgateway'),
  /** Key of the HMAC over knowledge-base source links (spec 3 section 2.4); unset: derived from KEY_ENCRYPTION_KEY. */
  KB_LINK_SECRET: z.string().min(32, 'KB_LINK_SECRET must be at least 32 characters').optional(),
  /** Public origin of the gateway used in signed links (e.g. https://api.example.com); unset: the origin the caller reached. */
  PUBLIC_BASE_URL: z.url().optional(),
  /** Where batch workers send a batch's lines (the gateway itself, so each line is a live call); default http://127.0.0.1:PORT. */
  GATEWAY_INTERNAL_URL: z.url().optional(),
  /** Lines of one batch in flight at once (further bounded by the account's concurrency limit; docs/batches.md). */
  BATCH_LINE_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  CATALOGUE_FILE: z.string().default('data/catalogue.json'),
  /** A prebuilt workflow bundle (scripts/bundle-workflows.ts); unset: the worker bundles workflows/ at start. */
  WORKFLOW_BUNDLE: z.string().optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /**
   * What a chat call does while its key's fresh state is read (gateway/middleware/auth.ts, docs/wallet.md):
   * `prepare` parses, validates and routes the body on the key's last known state, and calls upstream only
   * once the fresh state admits it; `upstream` also sends the upstream call (a refusal stops it, so a stale
   * guess can cost a stopped upstream call; spec 1 section 8 wants none on a pre-charge 402); `off` waits first.
   */
  CHAT_AUTH_OVERLAP: z.enum(['off', 'prepare', 'upstream']).default('prepare'),
  /**
   * The gateway's old-generation growth past its last full collection, in percent (infra/heap.ts).
   * 0 (default) keeps V8's own rule (up to 4x on a small heap); 25 cut the RSS after load from 256 to
   * 171 MB and the 2,000-stream peak by about 20 MB, for 15-20 % more CPU on small high-rate requests.
   */
  GATEWAY_HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(300).default(0),
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
  /** Test-only crash points, comma-separated (infra/failpoints.ts). */
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
  /** HMAC secret of the payment processor's webhooks; unset, one is derived from ADMIN_TOKEN (the stand-in processor signs with the same). */
  PAYMENT_WEBHOOK_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16).optional()),
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
 * The key to send to a channel: its stored secret (unsealed when the catalogue
 * loads), else the variable its `api_key_env` names, else 'gateway' (the simulator accepts any).
 */
export function upstreamApiKey(config: Pick<Config, 'UPSTREAM_KEYS'>, channel: { api_key_env?: string | null; api_key?: string }): string {
  return channel.api_key || (channel.api_key_env && config.UPSTREAM_KEYS[channel.api_key_env]) || 'gateway';
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const keys: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (UPSTREAM_KEY_VAR.test(name) && value) keys[name] = value;
  keys.UPSTREAM_API_KEY = parsed.data.UPSTREAM_API_KEY;
  const urls: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (CHANNEL_URL_VAR.test(name) && value) urls[name] = value.replace(/\/+$/, '');
  urls.SIMULATOR_URL = parsed.data.SIMULATOR_URL;
  return { ...parsed.data, UPSTREAM_KEYS: keys, CHANNEL_URL_VARS: urls };
}

/**
 * Tracing (tracing/) reads the standard OpenTelemetry variables: it is on when
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
