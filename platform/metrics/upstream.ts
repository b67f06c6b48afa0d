import { UpstreamHttpError, UpstreamTransportError } from '../../domain/channel-ladder';
import type { Metrics } from './registry';

/**
 * Upstream attempts, seen from the channel ladder's watcher hook
 * (domain/channel-ladder.ts): one count and one duration per attempt, by
 * channel and outcome. The time to first byte of an attempt's request is
 * counted where the request is made (platform/upstream.ts, given the
 * attempt's channel by the chat pipeline and by a media call's
 * `http.forAttempt`), not found from here: the AsyncLocalStorage that once
 * carried the channel to undici's diagnostics turned async hooks on for the
 * whole process on Node 20, and with metrics on a chat call cost 15-25 %
 * more CPU (dev/bench/README.md, round 21).
 */

/** A ladder entry's channel id: chat and clip templates climb `Channel`s, media climbs `{ provider, call: { channel } }`. */
export function channelIdOf(entry: unknown): string {
  const e = entry as { id?: unknown; call?: { channel?: { id?: unknown } } } | null;
  if (typeof e?.id === 'string') return e.id;
  if (typeof e?.call?.channel?.id === 'string') return e.call.channel.id;
  return 'unknown';
}

/** What an attempt came to, in a small fixed set. */
export function attemptOutcome(err: unknown): string {
  if (err instanceof UpstreamHttpError) return err.status === 429 ? 'http_429' : err.status >= 500 ? 'http_5xx' : 'http_4xx';
  if (err instanceof UpstreamTransportError) return err.kind;
  // The chat pipeline's ClientGone: the client left, the upstream is not to blame.
  if ((err as { constructor?: { name?: string } })?.constructor?.name === 'ClientGone') return 'aborted';
  return 'other';
}

export async function watchUpstreamAttempt<T>(m: Metrics, entry: unknown, n: number, run: () => Promise<T>): Promise<T> {
  const channel = channelIdOf(entry);
  const started = performance.now();
  let outcome = 'ok';
  try {
    return await run();
  } catch (err) {
    outcome = attemptOutcome(err);
    throw err;
  } finally {
    m.upstreamAttempts.inc({ channel, outcome, failover: n > 1 ? 'true' : 'false' });
    m.upstreamAttemptDuration.observe({ channel, outcome }, (performance.now() - started) / 1000);
  }
}
