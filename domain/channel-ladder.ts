import { MAX_CHANNEL_ATTEMPTS } from './catalogue';
import type { AttemptVerdict } from './channel-breaker';

/**
 * The channel ladder (spec 1 section 1, spec 2): a request or task tries its
 * model's channels in catalogue order, at most three; an upstream 5xx or a
 * failed connection moves to the next channel, anything else ends the climb.
 * Nothing is retried once the client got a byte: the ladder ends when an
 * attempt returns, and what the caller does with the answer (relay a stream)
 * is outside it. Chat, media submissions and clip templates climb it here.
 */

/** An upstream answered with a non-2xx status. */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly contentType: string | undefined,
    /** The upstream's response headers, where the caller passes some on (429 Retry-After). */
    readonly headers: Record<string, string | string[] | undefined> = {},
  ) {
    super(`upstream HTTP ${status}: ${body.slice(0, 300)}`);
    this.name = 'UpstreamHttpError';
  }
}

/** The upstream could not be reached (connection refused or reset), did not answer in time, or cut its answer. */
export class UpstreamTransportError extends Error {
  constructor(readonly kind: 'connect' | 'timeout' | 'other', message: string) {
    super(message);
    this.name = 'UpstreamTransportError';
  }
}

/** Which failures move to the next channel. */
export interface LadderPolicy {
  /** At most this many channels are tried. */
  maxChannels: number;
  /** An HTTP status at or above this moves on; below it, the upstream refused the request and another channel would too. */
  retryStatusFrom: number;
  /** Transport failures that move on. */
  retryTransport: ReadonlyArray<UpstreamTransportError['kind']>;
}

/**
 * Chat: a timeout is the request's own deadline (the pool's header and body
 * timeouts are that deadline), so it ends the climb as a 504.
 */
export const CHAT_LADDER: LadderPolicy = { maxChannels: MAX_CHANNEL_ATTEMPTS, retryStatusFrom: 500, retryTransport: ['connect', 'other'] };

/** Media vendor calls: each hop has its own timeout inside the family's budget, so a hop that times out moves on. */
export const MEDIA_LADDER: LadderPolicy = { maxChannels: MAX_CHANNEL_ATTEMPTS, retryStatusFrom: 500, retryTransport: ['connect', 'timeout', 'other'] };

/** True when this failure of one channel lets the next channel try. */
export function movesOn(policy: LadderPolicy, err: unknown): boolean {
  if (err instanceof UpstreamHttpError) return err.status >= policy.retryStatusFrom;
  if (err instanceof UpstreamTransportError) return policy.retryTransport.includes(err.kind);
  return false;
}

/** What an attempt's failure says about the channel's health (domain/channel-breaker.ts). */
export function verdictOf(err: unknown): AttemptVerdict {
  if (err instanceof UpstreamHttpError) return err.status >= 500 ? 'failed' : err.status === 429 ? 'neutral' : 'ok';
  if (err instanceof UpstreamTransportError) return 'failed';
  return 'neutral';
}

/** Per-channel circuit breakers as the ladder sees them (capabilities/catalogue/channel-health.ts). */
export interface LadderBreaker<C> {
  /** False while the channel's breaker is open (or its half-open probe is taken). */
  admit(channel: C): boolean;
  record(channel: C, verdict: AttemptVerdict, reason?: string): void;
}

export interface LadderOptions<C = unknown> {
  /** Channels whose breaker is open go behind every admitted one: tried only when the healthy ones failed. */
  breaker?: LadderBreaker<C>;
  /** Unix ms by which the whole climb must be over (media families with a budget); the pending attempt is given up then. */
  deadline?: number;
  /** Why the climb stopped at the deadline (an UpstreamTransportError 'timeout' with this message). */
  deadlineMessage?: string;
}

/**
 * Try `attempt` on each channel in turn under `policy`. Returns the first
 * answer, with the channel and how many channels it took; throws the last
 * failure when every channel failed, or at once a failure that does not move
 * on (and anything that is not an upstream failure). `attempt` gets the
 * 1-based attempt number.
 */
export async function climbLadder<C, T>(
  channels: readonly C[],
  policy: LadderPolicy,
  attempt: (channel: C, n: number) => Promise<T>,
  opts: LadderOptions<NoInfer<C>> = {},
): Promise<{ value: T; channel: C; attempts: number }> {
  const deadline = opts.deadline ?? Infinity;
  const { breaker } = opts;
  // The error is made only when no channel answered: an Error captures a stack, which costs on every call.
  let last: unknown;
  let n = 0;
  for (const channel of breakerOrder(channels, policy.maxChannels, breaker)) {
    if (Date.now() >= deadline) throw new UpstreamTransportError('timeout', opts.deadlineMessage ?? 'the channel ladder ran out of time');
    n++;
    try {
      const value = await withDeadline(watchers.length ? watched(channel, n, () => attempt(channel, n)) : attempt(channel, n), deadline);
      breaker?.record(channel, 'ok');
      return { value, channel, attempts: n };
    } catch (err) {
      breaker?.record(channel, verdictOf(err), err instanceof Error ? err.message.slice(0, 200) : undefined);
      if (!movesOn(policy, err)) throw err;
      last = err;
    }
  }
  throw n === 0 ? new UpstreamTransportError('connect', 'no upstream channel is available') : last;
}

/**
 * The channels to try, at most `max`: the admitted ones in ladder order, then
 * the ones whose breaker is open (a breaker never refuses a request that has
 * no healthy channel left; it only keeps the others from being tried first).
 * `admit` is asked lazily, so a half-open probe is only claimed by a request
 * that will try the channel.
 */
function* breakerOrder<C>(channels: readonly C[], max: number, breaker: LadderBreaker<C> | undefined): Generator<C> {
  if (!breaker) {
    yield* channels.slice(0, max);
    return;
  }
  const held: C[] = [];
  let given = 0;
  for (const c of channels) {
    if (given >= max) return;
    if (breaker.admit(c)) {
      given++;
      yield c;
    } else held.push(c);
  }
  for (const c of held) {
    if (given >= max) return;
    given++;
    yield c;
  }
}

/**
 * Something that watches every attempt of every climb in this process
 * (platform/metrics/, platform/tracing/): it wraps the attempt and sees its answer or failure.
 * Installed once at start; with none installed an attempt runs bare.
 */
export type AttemptWatcher = <T>(channel: unknown, n: number, run: () => Promise<T>) => Promise<T>;
const watchers: AttemptWatcher[] = [];

export function watchAttempts(watcher: AttemptWatcher): void {
  if (!watchers.includes(watcher)) watchers.push(watcher);
}

function watched<T>(channel: unknown, n: number, run: () => Promise<T>): Promise<T> {
  let wrapped = run;
  for (const watch of watchers) {
    const inner = wrapped;
    wrapped = () => watch(channel, n, inner);
  }
  return wrapped();
}

/** The attempt, or a transport timeout once the ladder's budget is spent (the hop's own timeout still bounds the call). */
function withDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  if (!Number.isFinite(deadline)) return work;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UpstreamTransportError('timeout', 'the channel ladder ran out of time')), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
