import type { UpstreamPools } from '../../platform/upstream';
import { classifyTransportError } from '../../platform/upstream';
import { UpstreamHttpError, UpstreamTransportError } from '../../domain/channel-ladder';

export { UpstreamHttpError, UpstreamTransportError };

export interface MediaHttp {
  json<T = unknown>(method: 'GET' | 'POST', url: string, opts: { headers: Record<string, string>; body?: unknown; timeoutMs: number }): Promise<{ status: number; json: T; text: string }>;
  raw(method: 'POST', url: string, opts: { headers: Record<string, string>; body: Buffer; timeoutMs: number }): Promise<{ status: number; text: string; contentType?: string }>;
  /** The same, for one ladder attempt on `channel`: its requests' time to first byte is counted under it (platform/upstream.ts). */
  forAttempt(channel: string): MediaHttp;
}

/** `channel`: set on the copy `forAttempt` makes for a ladder attempt. */
export function createMediaHttp(pools: UpstreamPools, channel?: string): MediaHttp {
  const send = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, body: Buffer | string | undefined, timeoutMs: number) => {
    const u = new URL(url);
    let res;
    try {
      res = await pools.request({ origin: u.origin, path: u.pathname + u.search }, { method, headers, body, signal: AbortSignal.timeout(timeoutMs), channel });
    } catch (err) {
      const kind = classifyTransportError(err);
      throw new UpstreamTransportError(kind === 'aborted' ? 'timeout' : kind, `${method} ${u.origin}${u.pathname}: ${(err as Error).message}`);
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw new UpstreamTransportError('connect', `${method} ${u.origin}${u.pathname}: body cut: ${(err as Error).message}`);
    }
    const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : undefined;
    if (res.statusCode >= 300) throw new UpstreamHttpError(res.statusCode, text, contentType);
    return { status: res.statusCode, text, contentType };
  };
  return {
    async json(method, url, opts) {
      const headers = { ...opts.headers, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) };
      const r = await send(method, url, headers, opts.body === undefined ? undefined : JSON.stringify(opts.body), opts.timeoutMs);
      let json: unknown;
      try {
        json = r.text ? JSON.parse(r.text) : null;
      } catch {
        throw new UpstreamHttpError(502, `upstream answered with a body that is not JSON: ${r.text.slice(0, 200)}`, r.contentType);
      }
      return { status: r.status, json: json as never, text: r.text };
    },
    raw: (method, url, opts) => send(method, url, opts.headers, opts.body, opts.timeoutMs),
    forAttempt: (id) => createMediaHttp(pools, id),
  };
}
