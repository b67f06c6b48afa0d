import { UpstreamHttpError, UpstreamTransportError } from './channel-ladder';

/**
 * One upstream attempt of a call, as the call log shows it (docs/call-log.md):
 * the channel, how it ended (the HTTP status, or `timeout`, `connect_error`,
 * `error`, `client_closed`) and how long it took (to the answer's headers).
 * Never the prompt or the answer. At most the ladder's three per call, kept
 * in the call's own usage row (chat) or task document (media), so recording
 * them costs no extra write.
 */
export interface CallAttempt {
  channel: string;
  status: number | 'timeout' | 'connect_error' | 'error' | 'client_closed';
  latency_ms: number;
}

/** Cap of the attempts a call keeps (the ladder tries at most three channels). */
export const MAX_CALL_ATTEMPTS = 3;

function statusOf(err: unknown): CallAttempt['status'] {
  if (err instanceof UpstreamHttpError) return err.status;
  if (err instanceof UpstreamTransportError) return err.kind === 'timeout' ? 'timeout' : err.kind === 'connect' ? 'connect_error' : 'error';
  if (err instanceof Error && err.constructor.name === 'ClientGone') return 'client_closed';
  return 'error';
}

/**
 * Wrap a ladder attempt so it appends what happened to `log` (capped): the
 * channel's id, the status (`ok(value)` for an answer, default 200) and the
 * time taken. The attempt's result or failure passes through unchanged.
 */
export function loggedAttempt<C, T>(
  log: CallAttempt[],
  channelId: (channel: C) => string,
  attempt: (channel: C, n: number) => Promise<T>,
  ok: (value: T) => number = () => 200,
  now: () => number = () => performance.now(),
): (channel: C, n: number) => Promise<T> {
  return async (channel, n) => {
    const t0 = now();
    try {
      const value = await attempt(channel, n);
      if (log.length < MAX_CALL_ATTEMPTS) log.push({ channel: channelId(channel), status: ok(value), latency_ms: Math.round(now() - t0) });
      return value;
    } catch (err) {
      if (log.length < MAX_CALL_ATTEMPTS) log.push({ channel: channelId(channel), status: statusOf(err), latency_ms: Math.round(now() - t0) });
      throw err;
    }
  };
}
