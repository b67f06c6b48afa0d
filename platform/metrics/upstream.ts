import { AsyncLocalStorage } from 'node:async_hooks';
import diagnostics from 'node:diagnostics_channel';
import { UpstreamHttpError, UpstreamTransportError } from '../../domain/channel-ladder';
import type { Metrics } from './registry';

/**
 * Upstream attempts, seen from the channel ladder's watcher hook
 * (domain/channel-ladder.ts): one count and one duration per attempt, by
 * channel and outcome, and the time to first byte of the HTTP request(s) the
 * attempt makes, from undici's diagnostics channels (no change to the chat
 * pipeline or the media adapters).
 */
const attemptChannel = new AsyncLocalStorage<string>();

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

/**
 * An attempt's count and duration; its requests' time to first byte is found through `attemptChannel`
 * unless the attempt reports it itself (`selfTimed`: the chat pipeline, platform/upstream.ts). On Node
 * 20 an AsyncLocalStorage's first `run` turns async hooks on for the process for good, which cost the
 * gateway's chat calls 15-25 % more CPU with metrics on; the chat path therefore never enters it.
 */
export async function watchUpstreamAttempt<T>(m: Metrics, entry: unknown, n: number, run: () => Promise<T>, selfTimed = false): Promise<T> {
  const channel = channelIdOf(entry);
  const started = performance.now();
  let outcome = 'ok';
  try {
    return await (selfTimed ? run() : attemptChannel.run(channel, run));
  } catch (err) {
    outcome = attemptOutcome(err);
    throw err;
  } finally {
    m.upstreamAttempts.inc({ channel, outcome, failover: n > 1 ? 'true' : 'false' });
    m.upstreamAttemptDuration.observe({ channel, outcome }, (performance.now() - started) / 1000);
  }
}

let subscribed = false;

/** Time to first byte of every undici request made inside an attempt (the Node-bundled fetch publishes too; outside an attempt it is ignored). */
export function watchUpstreamHeaders(m: Metrics): void {
  if (subscribed) return;
  subscribed = true;
  const sent = new WeakMap<object, { channel: string; at: number }>();
  diagnostics.subscribe('undici:request:create', (message) => {
    const channel = attemptChannel.getStore();
    if (channel) sent.set((message as { request: object }).request, { channel, at: performance.now() });
  });
  diagnostics.subscribe('undici:request:headers', (message) => {
    const start = sent.get((message as { request: object }).request);
    if (start) m.upstreamTtfb.observe({ channel: start.channel }, (performance.now() - start.at) / 1000);
  });
}
