import { AUTH_MESSAGES, errors, type GatewayError } from '../../domain/errors';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import { KEY_PATTERN, remainingNano } from '../../domain/api-key';
import { sha256Hex } from '../../platform/secrets';
import { countOptimisticAuth } from '../../platform/metrics/index';
import type { PlatformDeps } from '../../capabilities/deps';
import type { AccountsDeps } from '../../capabilities/accounts/deps';
import type { Ctx, Middleware } from '../context';
import type { AuthSnapshot } from '../../capabilities/accounts/auth-lookup';
import { applyRate, holdLease, isStreamingBody, LEASE_MS } from './rate-limit';

/** What key checks read: the cached key lookup, and Redis for the limiter and "last used". */
export type AuthDeps = Pick<PlatformDeps, 'redis'> & Pick<AccountsDeps, 'authLookup'>;

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
  /**
   * With `agentKeys: 'serve'`: the 403 of an agent key's agent (deleted, unpublished, another enterprise), or null.
   * Asked only of an agent key that may spend nothing more, so that 403 outranks the 402 (spec 3 section 7).
   */
  agentRefusal?: (key: AuthSnapshot['key']) => Promise<GatewayError | null>;
  /**
   * Run the handler on this process's last snapshot of the key while its fresh state is read (see
   * `optimistic`). Only for handlers that await `ctx.state.authConfirmed` before any effect: the chat pipeline.
   */
  optimistic?: boolean;
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

function touchLastUsed(deps: AuthDeps, accountId: string, keyId: string): void {
  const now = Date.now();
  if (now - (lastUsedWritten.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
  if (lastUsedWritten.size > 100_000) lastUsedWritten.clear();
  lastUsedWritten.set(keyId, now);
  void deps.redis.set(accountRedisKeys.keyLastUsed(accountId, keyId), now).catch(() => undefined);
}

export function authenticate(deps: AuthDeps, options: AuthOptions): Middleware {
  const sources = options.methods === 'all' ? SOURCES_ALL : SOURCES_HEADERS;
  return async function auth(ctx: Ctx, next) {
    const presented = extractKey(ctx, options.methods);
    if (!presented) throw errors.auth(AUTH_MESSAGES.missing(`send the key in ${sources}`));
    if (!KEY_PATTERN.test(presented)) throw errors.auth(AUTH_MESSAGES.missing('expected sk-<service>-<64 hex characters>'));

    const hash = sha256Hex(presented);
    ctx.state.keyHash = hash;
    const limit = options.rateLimited !== false ? { member: ctx.state.requestId, leaseMs: LEASE_MS } : undefined;
    const guess = options.optimistic ? deps.authLookup.guess(hash) : undefined;
    if (guess && actsOn(guess, options)) return optimistic(deps, ctx, next, options, guess, deps.authLookup.byHash(hash, limit));

    const snapshot = await deps.authLookup.byHash(hash, limit);
    // Only an agent key on the endpoint that serves them may be read further (no extra wait on any other path).
    const spent = options.agentRefusal && snapshot?.key.agent_id ? await spentAgentKey(snapshot, options) : null;
    const release = admit(deps, ctx, snapshot, options, spent);
    try {
      await next();
    } finally {
      if (release && !isStreamingBody(ctx)) release();
    }
  };
}

/** Why this key may not make this call (401, or 403 for an agent key off its endpoint), or null. */
export function refusal(snapshot: AuthSnapshot | null, options: Pick<AuthOptions, 'agentKeys'>, now = Date.now()): GatewayError | null {
  if (!snapshot || snapshot.key.deleted) return errors.auth(AUTH_MESSAGES.invalid);
  const { key, account } = snapshot;
  if (!key.enabled) return errors.auth(AUTH_MESSAGES.revoked);
  if (key.expires_at !== null && key.expires_at <= now) return errors.auth(AUTH_MESSAGES.expired);
  if (!account || account.status !== 'active') return errors.auth(AUTH_MESSAGES.inactive);
  if (key.agent_id && options.agentKeys !== 'serve') return errors.agentKeyEndpoint();
  return null;
}

/**
 * An agent key that passes the key checks but may spend nothing more: its agent's 403, which outranks the
 * 402 (null: the 402 stands). Ordinary keys, and agent keys with room, read nothing more here. (Agent keys
 * never take the optimistic path: `actsOn`.)
 */
async function spentAgentKey(snapshot: AuthSnapshot | null, options: AuthOptions): Promise<GatewayError | null> {
  if (!options.agentRefusal || !options.billable || !snapshot?.key.agent_id || refusal(snapshot, options)) return null;
  if (remainingNano(snapshot.balanceNano, snapshot.key, snapshot.keySpendNano) > 0) return null;
  return options.agentRefusal(snapshot.key).catch(() => null);
}

/**
 * Admit the request on its fresh snapshot: 401/403 (refusal), else the call's auth state and the
 * limiter's verdict, a concurrency slot when one was granted, then 402 for a spent wallet on a billable
 * endpoint (or, for a spent agent key, its agent's 403: `spentRefusal`). Returns what frees the slot.
 */
function admit(deps: AuthDeps, ctx: Ctx, snapshot: AuthSnapshot | null, options: AuthOptions, spentRefusal: GatewayError | null = null): (() => void) | undefined {
  const refused = refusal(snapshot, options);
  if (refused) throw refused;
  const { key, account, balanceNano, keySpendNano, rate } = snapshot!;
  ctx.state.auth = { key, account: account!, balanceNano, keySpendNano };
  ctx.state.rate = rate;
  const release = rate?.allowed && rate.concurrency ? holdLease(deps, ctx, account!.id) : undefined;
  if (options.billable && remainingNano(balanceNano, key, keySpendNano) <= 0) {
    release?.();
    throw spentRefusal ?? errors.quota();
  }
  if (options.touchLastUsed) touchLastUsed(deps, key.account_id, key.id);
  return release;
}

/**
 * A guess is acted on only when the call it predicts is admitted with room to spare: every check
 * passes, the wallet is not spent, and the account's limits (if any) had at least a tenth of their
 * room left (two requests at least). A wrong guess costs an upstream call that is stopped when the
 * fresh state arrives; these bounds keep that to state changes (a key disabled, a cap reached), not
 * to every call of an account at its limit.
 */
function actsOn(guess: AuthSnapshot, options: AuthOptions): boolean {
  if (refusal(guess, options) || guess.key.agent_id || !guess.raw) return false;
  if (options.billable && remainingNano(guess.balanceNano, guess.key, guess.keySpendNano) <= 0) return false;
  const rate = guess.rate;
  if (!rate) return true;
  const room = (limit: number, used: number) => !limit || limit - used >= Math.max(2, Math.ceil(limit / 10));
  return rate.allowed && room(rate.rpm, rate.rpmUsed) && room(rate.concurrency, rate.concUsed);
}

/** What an optimistic call learns when its fresh state arrives and admits it: whether the records moved since the guess. */
export interface AuthConfirmation {
  /** The key or account record differs from the guess: checks made on the guess (model access) are made again. */
  changed: boolean;
}

/**
 * An optimistic call (the chat endpoints): the handler runs on the last snapshot this process read for
 * the key (at most GUESS_MAX_AGE_MS old) while the fresh one is read, so the auth round trip overlaps the
 * upstream call instead of preceding it. Nothing reaches the client, and nothing is charged or logged,
 * before the fresh state admits the call: the chat pipeline awaits `ctx.state.authConfirmed` before it
 * answers or settles, and stops the upstream call at once when it refuses; here, any error the handler
 * throws is outranked by a refusal, and a handler that did not wait is waited for. The refusal is the
 * one a non-optimistic call would get (401, 402, 429 with its headers), with the same usage row.
 */
async function optimistic(deps: AuthDeps, ctx: Ctx, next: () => Promise<unknown>, options: AuthOptions, guess: AuthSnapshot, fresh: Promise<AuthSnapshot | null>): Promise<void> {
  ctx.state.auth = { key: guess.key, account: guess.account!, balanceNano: guess.balanceNano, keySpendNano: guess.keySpendNano };
  let release: (() => void) | undefined;
  const confirmed = fresh.then((snapshot): AuthConfirmation => {
    ctx.state.auth = undefined; // a 401 has no account to log the call against
    try {
      release = admit(deps, ctx, snapshot, options);
      if (ctx.state.rate) applyRate(ctx, ctx.state.rate);
    } catch (err) {
      countOptimisticAuth('refused');
      throw err;
    }
    countOptimisticAuth('admitted');
    return { changed: snapshot!.raw?.key !== guess.raw!.key || snapshot!.raw?.account !== guess.raw!.account };
  });
  confirmed.catch(() => undefined); // awaited below, and by the pipeline
  ctx.state.authConfirmed = confirmed;
  try {
    await next().catch(async (err: unknown) => {
      await confirmed;
      throw err;
    });
    await confirmed;
  } finally {
    if (release && !isStreamingBody(ctx)) release();
  }
}
