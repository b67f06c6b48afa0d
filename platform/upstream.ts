import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { countUpstreamTtfb } from './metrics/index';

/**
 * Keep-alive connection pools, one per upstream origin, shared by every
 * request of the process. Bytes we do not need to change are forwarded as is.
 */
export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly opts: { connections: number; timeoutMs: number }) {}

  pool(origin: string): Pool {
    let p = this.pools.get(origin);
    if (!p) {
      p = new Pool(origin, {
        connections: this.opts.connections,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
        connectTimeout: 10_000,
      });
      this.pools.set(origin, p);
    }
    return p;
  }

  /**
   * `signal`: an AbortSignal, or an EventEmitter with `aborted` that emits 'abort' (undici takes both).
   * `channel`: the ladder channel the request is an attempt of: the time to its answer's headers is
   * counted here (`gateway_upstream_ttfb_seconds`). Every attempt's request names it (the chat
   * pipeline; media calls through `MediaHttp.forAttempt`); a poll or a download does not.
   */
  async request(url: UpstreamUrl, init: { method: 'POST' | 'GET'; headers: Record<string, string>; body?: Buffer | string; signal: AbortSignal | (NodeJS.EventEmitter & { aborted: boolean }); channel?: string }): Promise<Dispatcher.ResponseData> {
    const sent = init.channel === undefined ? 0 : performance.now();
    const res = await this.pool(url.origin).request({
      path: url.path,
      method: init.method,
      headers: init.headers,
      body: init.body,
      signal: init.signal,
    });
    if (init.channel !== undefined) countUpstreamTtfb(init.channel, (performance.now() - sent) / 1000);
    return res;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.pools.clear();
  }
}

/** An upstream endpoint as a pool needs it: the origin (the pool) and the request's path with its query. */
export interface UpstreamUrl {
  readonly origin: string;
  readonly path: string;
}

const parsedUrls = new Map<string, UpstreamUrl>();

/**
 * An upstream URL parsed once per distinct text: a channel's endpoints are few and fixed, and a WHATWG
 * URL parse and its getters cost a chat call 5-15 us on the path to its upstream request (one-client
 * profile). Bounded: past 10,000 texts (a Gemini URL names its model) the memo starts over.
 */
export function upstreamUrl(text: string): UpstreamUrl {
  let url = parsedUrls.get(text);
  if (!url) {
    const u = new URL(text);
    url = { origin: u.origin, path: u.pathname + u.search };
    if (parsedUrls.size >= 10_000) parsedUrls.clear();
    parsedUrls.set(text, url);
  }
  return url;
}

/**
 * Drop an upstream answer's body unread. undici's body emits an 'error' (RequestAbortedError) when it is
 * destroyed before its end, and an 'error' nobody listens to ends the process: the listener is attached
 * first.
 */
export function discardBody(body: Dispatcher.ResponseData['body']): void {
  body.on('error', ignore).destroy();
}

function ignore(): void {}

export type UpstreamFailure = 'connect' | 'timeout' | 'aborted' | 'other';

/** Classify a thrown transport error: connection failures are retried on another channel. */
export function classifyTransportError(err: unknown): UpstreamFailure {
  const e = err as { code?: string; name?: string };
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError || e.name === 'TimeoutError') return 'timeout';
  if (e.name === 'AbortError' || err instanceof undiciErrors.RequestAbortedError) return 'aborted';
  if (err instanceof undiciErrors.ConnectTimeoutError || err instanceof undiciErrors.SocketError) return 'connect';
  if (e.code && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'].includes(e.code)) return 'connect';
  return 'other';
}
