import { AUTH_MESSAGES, errors } from '../../domain/errors';
import { KEY_PATTERN, remainingNano } from '../../domain/api-key';
import { sha256Hex } from '../../infra/secrets';
import { rkeys } from '../../infra/redis';
import type { GatewayDeps } from '../deps';
import type { Ctx, Middleware } from '../context';
import { holdLease, isStreamingBody, LEASE_MS } from './rate-limit';

export interface AuthOptions {
  /** `all`: x-api-key, x-goog-api-key, ?key=, Bearer (in that order); `header-only`: x-api-key and Bearer. */
  methods: 'all' | 'header-only';
  /** Billable endpoints refuse a spent wallet with 402 here, before any pre-charge. */
  billable: boolean;
  /** Whether the call counts as use of the key (the balance endpoint does not). */
  touchLastUsed: boolean;
  /** Apply the account's rate limits (every /v1/* call except the billing views). Default true. */
  rateLimited?: boolean;
  /** Only POST /v1/chat/completions serves agent keys (spec 3 section 5); every other endpoint refuses them here. */
  agentKeys?: 'serve';
}

const SOURCES_ALL = 'x-api-key, x-goog-api-key, ?key= or Authorization: Bearer';
const SOURCES_HEADERS = 'x-api-key or Authorization: Bearer';

/** The key from the first method present, in the spec's priority order. */
export function extractKey(ctx: Ctx, methods: AuthOptions['methods']): string | undefined {
  const apiKey = ctx.get('x-api-key');
  if (apiKey) return apiKey;
  if (methods === 'all') {
    const goog = ctx.get('x-goog-api-key');
    if (goog) return goog;
    const q = ctx.query.key;
    if (typeof q === 'string' && q) return q;
  }
  const authz = ctx.get('authorization');
  if (authz) {
    const m = /^Bearer\s+(.+)$/i.exec(authz);
    return m ? m[1].trim() : authz;
  }
  return undefined;
}

/** "Last used" is minute-grained: each process writes it at most once a minute per key, not on every call. */
const LAST_USED_EVERY_MS = 60_000;
const lastUsedWritten = new Map<string, number>();

function touchLastUsed(deps: GatewayDeps, accountId: string, keyId: string): void {
  const now = Date.now();
  if (now - (lastUsedWritten.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
  if (lastUsedWritten.size > 100_000) lastUsedWritten.clear();
  lastUsedWritten.set(keyId, now);
  void deps.redis.set(rkeys.keyLastUsed(accountId, keyId), now).catch(() => undefined);
}

export function authenticate(deps: GatewayDeps, options: AuthOptions): Middleware {
  const sources = options.methods === 'all' ? SOURCES_ALL : SOURCES_HEADERS;
  return async function auth(ctx: Ctx, next) {
    const presented = extractKey(ctx, options.methods);
    if (!presented) throw errors.auth(AUTH_MESSAGES.missing(`send the key in ${sources}`));
    if (!KEY_PATTERN.test(presented)) throw errors.auth(AUTH_MESSAGES.missing('expected sk-<service>-<64 hex characters>'));

    const limited = options.rateLimited !== false;
    const snapshot = await deps.authLookup.byHash(sha256Hex(presented), limited ? { member: ctx.state.requestId, leaseMs: LEASE_MS } : undefined);
    if (!snapshot || snapshot.key.deleted) throw errors.auth(AUTH_MESSAGES.invalid);
    const { key, account, balanceNano, keySpendNano } = snapshot;
    if (!key.enabled) throw errors.auth(AUTH_MESSAGES.revoked);
    if (key.expires_at !== null && key.expires_at <= Date.now()) throw errors.auth(AUTH_MESSAGES.expired);
    if (!account || account.status !== 'active') throw errors.auth(AUTH_MESSAGES.inactive);
    if (key.agent_id && options.agentKeys !== 'serve') throw errors.agentKeyEndpoint();
    ctx.state.auth = { key, account, balanceNano, keySpendNano };
    ctx.state.rate = snapshot.rate;
    const release = snapshot.rate?.allowed && snapshot.rate.concurrency ? holdLease(deps, ctx, account.id) : undefined;
    try {
      if (options.billable && remainingNano(balanceNano, key, keySpendNano) <= 0) throw errors.quota();
      if (options.touchLastUsed) touchLastUsed(deps, key.account_id, key.id);
      await next();
    } finally {
      if (release && !isStreamingBody(ctx)) release();
    }
  };
}
