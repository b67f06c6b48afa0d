import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import { errors, GatewayError } from '../../domain/errors';
import type { Ctx, Middleware } from '../context';
import { deadlineIn } from '../deadlines';

/**
 * The body policy of every JSON endpoint, in one place: at most `limitBytes`
 * (the route's limit, 413 over it), valid JSON, an object at the top, and at
 * most MAX_JSON_DEPTH levels of nesting (400 over it). The depth is checked on
 * the raw bytes before parsing, so no deeper document reaches JSON.parse, a
 * handler, the store (mongoose clones recursively) or an upstream (chat
 * forwards the raw bytes).
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Read the raw body (kept for byte forwarding) and parse it as JSON under the policy.
 * `memberBytes`: also measure, in the same walk as the depth check, how many bytes each
 * top-level member's value takes in the raw body (chat's pre-charge measures the prompt so,
 * without serialising it again).
 */
export function jsonBody(limitBytes: number, opts: { memberBytes?: boolean } = {}): Middleware {
  const measure = opts.memberBytes === true;
  return async function readJson(ctx: Ctx, next) {
    const raw = await readRaw(ctx, limitBytes);
    ctx.state.rawBody = raw;
    const members = measure ? new Map<string, number>() : undefined;
    ctx.state.body = parseJsonBody(raw, members);
    ctx.state.bodyMemberBytes = members;
    // Returned, not awaited: nothing happens after it, and a stream would keep this frame suspended.
    return next();
  };
}

/** The policy on bytes already read: a JSON object no deeper than MAX_JSON_DEPTH, or a 400. */
export function parseJsonBody(raw: Buffer, memberBytes?: Map<string, number>): Record<string, unknown> {
  if (raw.length === 0) throw errors.invalidRequest('request body must be a JSON object');
  // JSON text is UTF-8 (RFC 8259): invalid bytes would be read as U+FFFD here and forwarded as they are upstream.
  if (!isUtf8(raw)) throw errors.invalidRequest('request body is not valid UTF-8');
  if (nestingExceeds(raw, MAX_JSON_DEPTH, memberBytes)) {
    throw errors.invalidRequest(`request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw errors.invalidRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.invalidRequest('request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/** Short strings are walked byte by byte; past this many bytes a string's end is found with indexOf. */
const SHORT_STRING = 64;

/**
 * True when the JSON text opens more than `max` arrays/objects at once (brackets inside strings do not count).
 * With `memberBytes`, also records the byte length of each top-level member's value (whitespace
 * around it excluded; a repeated name keeps the last, as JSON.parse does).
 */
export function nestingExceeds(raw: Buffer, max: number, memberBytes?: Map<string, number>): boolean {
  const n = raw.length;
  let depth = 0;
  // Top-level member being read: its name's bytes, then where its value starts.
  let expectName = false;
  let nameStart = -1;
  let nameEnd = -1;
  let valueStart = -1;
  const record = (end: number) => {
    let s = valueStart;
    let e = end;
    while (s < e && isSpace(raw[s])) s++;
    while (e > s && isSpace(raw[e - 1])) e--;
    memberBytes!.set(raw.toString('utf8', nameStart, nameEnd), e - s);
    nameStart = valueStart = -1;
  };
  for (let i = 0; i < n; i++) {
    const c = raw[i];
    if (c === 0x22) {
      const end = stringEnd(raw, i + 1);
      if (end < 0) return false; // unterminated string: JSON.parse reports it
      if (expectName && depth === 1) {
        nameStart = i + 1;
        nameEnd = end;
        expectName = false;
      }
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
      if (depth === 1 && c === 0x7b) expectName = true;
    } else if (c === 0x5d || c === 0x7d) {
      if (depth === 1 && memberBytes && valueStart >= 0) record(i);
      depth--;
    } else if (depth === 1 && memberBytes) {
      if (c === 0x3a && nameStart >= 0 && valueStart < 0) valueStart = i + 1;
      else if (c === 0x2c) {
        if (valueStart >= 0) record(i);
        expectName = true;
      }
    }
  }
  return false;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Index of the quote closing the string whose first byte is at `from`, or -1. */
function stringEnd(raw: Buffer, from: number): number {
  const n = raw.length;
  const stop = Math.min(n, from + SHORT_STRING);
  let j = from;
  for (; j < stop; j++) {
    const c = raw[j];
    if (c === 0x5c) j++; // skip the escaped byte
    else if (c === 0x22) return j;
  }
  if (j >= n) return -1;
  // A long string (base64 images): jump from quote to quote; one preceded by an odd run of backslashes is escaped.
  for (;;) {
    j = raw.indexOf(0x22, j);
    if (j < 0) return -1;
    let backslashes = 0;
    for (let k = j - 1; raw[k] === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return j;
    j++;
  }
}

/**
 * The client went away before its request body was complete (spec 2 section
 * 2.5: a client disconnect is `interrupted`, not a gateway fault). Nothing can
 * be answered; the usage capture records the call as interrupted and the
 * error handler lets it pass without an error log.
 */
export class ClientDisconnected extends Error {
  readonly code = 'client_closed';
  constructor(message = 'client disconnected while sending the request body') {
    super(message);
    this.name = 'ClientDisconnected';
  }
}

/** How long a request body may take: idle (no byte) and in all. */
export interface BodyTimeouts {
  idleMs: number;
  totalMs: number;
}

const DEFAULT_TIMEOUTS: BodyTimeouts = { idleMs: 20_000, totalMs: 300_000 };
const TIMEOUTS = Symbol('bodyTimeouts');

/** Set once per app (createApp, from BODY_IDLE_TIMEOUT_MS and BODY_READ_TIMEOUT_MS): every body reader uses them. */
export function setBodyTimeouts(app: Koa<any>, timeouts: BodyTimeouts): void {
  (app.context as unknown as Record<symbol, BodyTimeouts>)[TIMEOUTS] = timeouts;
}

export function bodyTimeoutsOf(ctx: Ctx): BodyTimeouts {
  return (ctx as unknown as Record<symbol, BodyTimeouts | undefined>)[TIMEOUTS] ?? DEFAULT_TIMEOUTS;
}

/**
 * Times a body read: `fail` is called with a 408 when no byte arrived for
 * `idleMs` or the body is not complete after `totalMs` (slow-loris uploads).
 * Call `touch` on every chunk and `stop` when the read ends.
 */
export function bodyDeadline(ctx: Ctx, fail: (err: GatewayError) => void): { touch(): void; stop(): void } {
  const { idleMs, totalMs } = bodyTimeoutsOf(ctx);
  const refuse = (why: string) => fail(new GatewayError('invalid_request', `request body ${why}`, { status: 408, headers: { Connection: 'close' } }));
  // One entry in the shared deadline sweep (not two timers per request): it stands at whichever of the
  // idle and the total limit comes first, and each chunk moves it.
  const started = performance.now();
  const next = () => Math.min(idleMs, totalMs - (performance.now() - started));
  const deadline = deadlineIn(next(), () => {
    if (performance.now() - started >= totalMs) refuse(`not complete after ${Math.round(totalMs / 1000)} s`);
    else refuse(`stalled: no data for ${Math.round(idleMs / 1000)} s`);
  });
  return {
    touch: () => deadline.reset(next()),
    stop: () => deadline.clear(),
  };
}

/**
 * The raw body, at most `limitBytes` (413 over it), within the body
 * timeouts (408). A refused body is not read further: the answer says
 * `Connection: close`, so the rest of an oversized or trickling upload is
 * not waited for.
 */
export async function readRaw(ctx: Ctx, limitBytes: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limitBytes) throw tooLargeAndClose(limitBytes);
  const req = ctx.req;
  if (req.readableEnded) return Buffer.alloc(0);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: Error) => {
      deadline.stop();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (!err) return resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      req.pause();
      reject(err);
    };
    const deadline = bodyDeadline(ctx, done);
    const onData = (chunk: Buffer) => {
      deadline.touch();
      size += chunk.length;
      if (size > limitBytes) return done(tooLargeAndClose(limitBytes));
      chunks.push(chunk);
    };
    const onEnd = () => done();
    const onError = (err: Error) => done(req.complete ? errors.invalidRequest(`request body could not be read: ${err.message}`) : new ClientDisconnected());
    const onClose = () => {
      if (!req.complete) done(new ClientDisconnected());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function tooLargeAndClose(limit: number): GatewayError {
  const err = bodyTooLarge(limit);
  return new GatewayError(err.code, err.message, { status: err.status, headers: { Connection: 'close' } });
}

/** The 413 of every body reader (JSON here, multipart in gateway/media/multipart.ts). */
export function bodyTooLarge(limit: number): GatewayError {
  const size = limit >= 1024 * 1024 ? `${Math.round(limit / 1024 / 1024)} MB` : `${Math.round(limit / 1024)} KB`;
  return new GatewayError('invalid_request', `request body exceeds ${size}`, { status: 413 });
}

/** How long, and how much, a connection answered before its request body was read whole keeps reading after the answer. */
const LINGER_MS = 2_000;
const LINGER_BYTES = 64 * 1024 ** 2;

/**
 * An answer that closes the connection before the request's body was read whole (a 413 over the
 * size limit, a 408 on a stalled upload): Node's server closes the socket as soon as the answer is
 * out, and closing with unread bytes makes the kernel send a reset, which can reach the client while
 * it is still writing, before it has read the answer (it then sees a broken pipe, not the 413). Here
 * the answer and its FIN go out first, then what the client still sends is read and dropped until it
 * closes its side, for at most LINGER_MS or LINGER_BYTES (nginx's lingering close, for the same
 * reason); then the socket is destroyed. Call before the answer is written.
 */
export function lingerAfterAnswer(req: IncomingMessage): void {
  const socket = req.socket;
  if (req.complete || socket.destroyed) return;
  socket.destroySoon = () => {
    let dropped = 0;
    const stop = () => socket.destroy();
    const timer = setTimeout(stop, LINGER_MS);
    socket.once('close', () => clearTimeout(timer));
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER_BYTES) stop();
    });
    req.resume();
    socket.end();
  };
}
