import { randomBytes } from 'node:crypto';
import type { Model } from 'mongoose';
import { GatewayError } from '../../domain/errors';
import { isDuplicateKey } from '../../platform/mongo';
import { idempotencyModel, idempotencyRedisKeys, type IdempotencyDoc } from './idempotency-store';
import { withLock } from '../../platform/lock';
import { isStoreUnavailable, retryStore } from '../../platform/store-retry';
import { sha256Hex } from '../../platform/secrets';
import type { ServiceDeps } from '../deps';
import type { Ctx, Middleware } from '../context';
import { countIdempotency } from '../../platform/metrics/index';

/** Spec 2 section 4.1 and 8. */
export const KEY_PATTERN = /^[\x20-\x7E]{1,200}$/;
export const RETENTION_MS = 7 * 24 * 3600 * 1000;
export const IN_FLIGHT_HOLD_MS = 10 * 60 * 1000;
/** Responses above this are not kept (only b64_json images get this large). */
export const MAX_CACHED_BODY_BYTES = 1024 * 1024;
/** How long one request may hold the right to take over a lapsed key. */
const TAKEOVER_LOCK_MS = 10_000;

export interface IdempotencyHandle {
  /** Remember a 2xx answer written by the handler itself (streamed responses); anything else frees the key. */
  complete(status: number, body: string, contentType: string): Promise<void>;
}

/**
 * The request's Idempotency-Key: undefined when the header is absent; a 400
 * invalid_idempotency_key when it is present but not 1 to 200 printable ASCII
 * characters (an empty header is a bad key, not an absent one).
 */
export function idempotencyKeyOf(ctx: Ctx): string | undefined {
  const key = ctx.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
    throw new GatewayError('invalid_idempotency_key', 'Idempotency-Key must be 1 to 200 printable ASCII characters', { param: 'Idempotency-Key' });
  }
  return key;
}

/**
 * A claim is certainly its holder's while it is this far from lapsing: only a lapsed claim is ever
 * taken over (by another request, on its own clock), so the margin covers clock skew between gateways.
 */
const SURELY_MINE_MS = 60_000;
/** Recording the answer of a call that succeeded: about 10 s of store outage. */
const SETTLE_RETRY = { retries: 6, minTimeoutMs: 150, budgetMs: 10_000 } as const;

/** The key's claim could not be read or written (the store is down or restarting): the spec's code, with Retry-After. */
function storeBusy(cause: unknown): GatewayError {
  return new GatewayError('internal_error', 'the Idempotency-Key could not be checked (a store is briefly unavailable); nothing was done, retry the request', {
    headers: { 'retry-after': '1' }, cause,
  });
}

const reuse = () => new GatewayError('idempotency_key_reuse', 'this Idempotency-Key was used with a different request (another body or another endpoint); use a new key for a new request', { status: 409 });
const busy = () => new GatewayError('idempotency_in_flight', 'this Idempotency-Key is busy; retry shortly', { status: 409 });

/** One request's claim on its Idempotency-Key. */
interface Claim {
  Idempotency: Model<IdempotencyDoc>;
  /** `{account}:{sha256(key)}`. */
  id: string;
  account: string;
  /** `{METHOD} {path}`: a key answers only the endpoint it was claimed on. */
  endpoint: string;
  bodyHash: string;
  /** The raw bytes' digest: what a claim stored before `bodyHash` meant the body's content (read as the same body). */
  rawHash: string;
  /** Random id of this request. */
  holder: string;
  /** When the claim lapses if this request never settles it. */
  until: Date;
}

/**
 * Idempotency-Key on charging POSTs. The claim is an insert against the
 * unique _id `{account}:{sha256(key)}` (atomic on MongoDB and FerretDB);
 * scope is the account. Only 2xx answers are remembered (7 days); failures
 * free the key; a running claim holds it up to 10 minutes.
 */
export function idempotency(deps: ServiceDeps): Middleware {
  const Idempotency = idempotencyModel(deps.db.conn);
  return async function idempotent(ctx: Ctx, next) {
    const key = idempotencyKeyOf(ctx);
    if (key === undefined) return next();
    const account = ctx.state.auth!.account.id;
    const claim: Claim = {
      Idempotency, id: `${account}:${sha256Hex(key)}`, account, endpoint: `${ctx.method} ${ctx.path}`, ...bodyDigests(ctx),
      holder: randomBytes(8).toString('hex'), until: new Date(Date.now() + IN_FLIGHT_HOLD_MS),
    };
    if ((await claimOrReplay(deps, ctx, claim)) === 'replayed') return;
    await runClaimed(deps, ctx, claim, next);
  };
}

/**
 * JSON bodies up to this size are compared by content. A larger one (images inline as base64, up to 96 MB) is
 * compared by its bytes: writing a 90 MB body out again and hashing the text held this event loop 450 ms, against
 * 54 ms for hashing the bytes it came in (a scratch measure); such bodies come from one client's code, retried as sent.
 */
export const CONTENT_DIGEST_MAX_BYTES = 1024 * 1024;

/**
 * "The same body" (spec 2 section 4.1) is the same content: a JSON body's members in any order and with any spacing
 * (a client's retry may serialise it again), a form's fields and files (its canonical digest, gateway/media/images-form.ts).
 */
function bodyDigests(ctx: Ctx): { bodyHash: string; rawHash: string } {
  const raw = ctx.state.rawBody ?? Buffer.alloc(0);
  const rawHash = sha256Hex(raw);
  const json = ctx.state.body !== undefined && !ctx.request.is('multipart') && raw.length <= CONTENT_DIGEST_MAX_BYTES;
  return { bodyHash: json ? sha256Hex(canonicalJson(ctx.state.body)) : rawHash, rawHash };
}

/** JSON text with every object's members sorted by name: one text for one content. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]]))
      : v,
  );
}

/**
 * The insert that is the claim. Every store call of the claim is retried when the store did not answer (a
 * restart closed the connection under it): an insert whose answer was lost is found on the next round as a
 * claim with this request's own (random) holder, so a retry never makes two claims, never refuses its own
 * claim as in flight.
 */
async function insertClaim(c: Claim): Promise<boolean> {
  try {
    await retryStore(() => c.Idempotency.create({
      _id: c.id, account_id: c.account, endpoint: c.endpoint, body_hash: c.bodyHash, state: 'in_flight', holder: c.holder, until: c.until,
      status: null, headers: null, body: null, not_cached: false, created_at: new Date(),
    }));
    return true;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return false;
  }
}

/**
 * Claims the key, or answers from the claim already there: the stored answer (a replay), or a 409.
 * Nothing has run yet when this throws.
 */
async function claimOrReplay(deps: ServiceDeps, ctx: Ctx, c: Claim): Promise<'claimed' | 'replayed'> {
  try {
    for (let round = 0; ; round++) {
      if (round > 5) throw busy();
      if (await insertClaim(c)) return 'claimed';
      const existing = await retryStore(() => c.Idempotency.findById(c.id).lean<IdempotencyDoc>());
      if (!existing) continue;
      if (existing.holder === c.holder) return 'claimed'; // this request's own insert, whose answer was lost
      if (existing.until.getTime() <= Date.now()) {
        if (await takeOver(deps, c, existing)) return 'claimed';
        continue;
      }
      replay(ctx, c, existing);
      return 'replayed';
    }
  } catch (err) {
    // Nothing ran yet: the store stayed down past the retries. A claim this request may have made (an
    // insert whose answer was lost) is freed if the store comes back while the driver still waits for it;
    // otherwise it lapses with the in-flight hold.
    if (isStoreUnavailable(err)) {
      void c.Idempotency.deleteOne({ _id: c.id, holder: c.holder }).catch(() => undefined);
      throw storeBusy(err);
    }
    throw err;
  }
}

/**
 * A lapsed claim (retention over, or its holder vanished in flight): the key counts as new. FerretDB does
 * not make a conditional delete atomic, so takeovers are serialised by a short Redis lock: the delete
 * re-reads the claim under it and can never remove a claim another taker just made.
 */
function takeOver(deps: ServiceDeps, c: Claim, lapsed: IdempotencyDoc): Promise<boolean> {
  return withLock(deps.redis, idempotencyRedisKeys.takeover(c.id), { waitMs: 0, leaseMs: TAKEOVER_LOCK_MS, busy }, async () => {
    await retryStore(() => c.Idempotency.deleteOne({ _id: c.id, holder: lapsed.holder }));
    return insertClaim(c);
  });
}

/**
 * Answers from another request's live claim: its stored answer, or 409 for another request (another body, or the
 * same body sent to another endpoint: a music task is no answer to an image submission), 409 while it runs or when
 * its answer was not kept.
 */
function replay(ctx: Ctx, c: Claim, existing: IdempotencyDoc): void {
  const otherEndpoint = existing.endpoint != null && existing.endpoint !== c.endpoint;
  if (otherEndpoint || (existing.body_hash !== c.bodyHash && existing.body_hash !== c.rawHash)) {
    countIdempotency('conflict');
    throw reuse();
  }
  if (existing.state === 'in_flight') {
    countIdempotency('in_flight');
    throw new GatewayError('idempotency_in_flight', 'a request with this Idempotency-Key is still running', { status: 409 });
  }
  if (existing.not_cached) {
    throw new GatewayError(
      'idempotency_response_not_cached',
      'the original request succeeded but its response was too large to keep; use the default url output to replay, or resubmit with a new key (charged again)',
      { status: 409 },
    );
  }
  ctx.status = existing.status ?? 200;
  ctx.type = existing.headers?.['content-type'] ?? 'application/json';
  ctx.set('Idempotency-Replayed', 'true');
  countIdempotency('replay');
  ctx.body = existing.body ?? '';
  ctx.state.usageRecorded = true; // a replay is not a new call
}

/** Runs the request under its claim, then keeps a 2xx answer for replays or frees the key. */
async function runClaimed(deps: ServiceDeps, ctx: Ctx, c: Claim, next: () => Promise<unknown>): Promise<void> {
  /**
   * The claim's own document: by `_id` alone while the claim is surely still this request's (the store
   * finds it through its index; FerretDB v1 reads the whole collection for any other filter, holding its
   * one write lock), by `_id` and holder near the end of the in-flight hold.
   */
  const mineFilter = () => (Date.now() < c.until.getTime() - SURELY_MINE_MS ? { _id: c.id } : { _id: c.id, holder: c.holder });

  let settled = false;
  /** Frees the key for a retry; if the store cannot take it, the claim lapses with the in-flight hold. */
  const release = async () => {
    settled = true;
    await retryStore(() => c.Idempotency.deleteOne(mineFilter()), SETTLE_RETRY).catch((err: unknown) => {
      deps.log.warn('Idempotency-Key not released; it stays in flight until its hold lapses', { trace: ctx.state.requestId, err });
    });
  };
  /**
   * Keeps a 2xx answer for replays. The call succeeded (a task exists, money moved): if the store cannot
   * take the answer, the client still gets it, and the key stays in flight until its hold lapses.
   */
  const remember = async (status: number, body: string, contentType: string) => {
    settled = true;
    const tooLarge = Buffer.byteLength(body) > (deps.config.IDEMPOTENCY_MAX_CACHED_BODY_BYTES ?? MAX_CACHED_BODY_BYTES);
    await retryStore(() => c.Idempotency.updateOne(
      mineFilter(),
      { $set: { state: 'done', until: new Date(Date.now() + RETENTION_MS), status, headers: { 'content-type': contentType }, body: tooLarge ? null : body, not_cached: tooLarge } },
    ), SETTLE_RETRY).catch((err: unknown) => {
      deps.log.error('answer of an Idempotency-Key not kept; the key stays in flight until its hold lapses', { trace: ctx.state.requestId, err });
    });
  };
  const handle: IdempotencyHandle = {
    complete: (status, body, contentType) => (status >= 200 && status < 300 ? remember(status, body, contentType) : release()),
  };
  ctx.state.idempotency = handle;
  try {
    await next();
  } catch (err) {
    if (!settled) await release();
    throw err;
  }
  if (settled || ctx.respond === false) return;
  if (ctx.status >= 200 && ctx.status < 300) {
    const body = ctx.body;
    const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : JSON.stringify(body);
    ctx.body = text;
    await remember(ctx.status, text, ctx.response.get('content-type') || 'application/json');
  } else {
    await release();
  }
}
