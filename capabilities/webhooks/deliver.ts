import { Client } from 'undici';
import type { LookupFunction } from 'node:net';
import type { ResolvedTarget } from './resolve';

export type PostResult =
  | { kind: 'delivered'; status: number }
  | { kind: 'http_error'; status: number; error: string }
  | { kind: 'timeout'; error: string }
  | { kind: 'connection_error'; error: string };

/** What a receiver's answer body may add to the delivery log. */
const ANSWER_SNIPPET = 200;

/**
 * One POST of a signed delivery to an already checked target. The socket
 * connects to the checked address only (a lookup that answers with it), so
 * the name is not resolved a second time; TLS still verifies the name.
 * Redirects are not followed (a 3xx is a failed attempt).
 */
export async function postDelivery(target: ResolvedTarget, headers: Record<string, string>, body: string, timeoutMs: number): Promise<PostResult> {
  const pinned: LookupFunction = (_host, options, callback) => {
    const cb = callback as (err: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;
    if ((options as { all?: boolean }).all) cb(null, [{ address: target.address, family: target.family }]);
    else cb(null, target.address, target.family);
  };
  const client = new Client(target.url.origin, {
    connect: { lookup: pinned, timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const abort = AbortSignal.timeout(timeoutMs);
  try {
    const res = await client.request({
      path: target.url.pathname + target.url.search,
      method: 'POST',
      headers: { ...headers, host: target.url.host },
      body,
      signal: abort,
    });
    const text = (await res.body.text().catch(() => '')).slice(0, ANSWER_SNIPPET);
    if (res.statusCode >= 200 && res.statusCode < 300) return { kind: 'delivered', status: res.statusCode };
    return { kind: 'http_error', status: res.statusCode, error: `receiver answered HTTP ${res.statusCode}${text ? `: ${text}` : ''}` };
  } catch (err) {
    const e = err as Error & { code?: string };
    if (abort.aborted || /Timeout/i.test(e.code ?? '') || /Timeout/i.test(e.name)) return { kind: 'timeout', error: `no answer within ${timeoutMs} ms` };
    return { kind: 'connection_error', error: `${e.code ?? e.name}: ${e.message}` };
  } finally {
    await client.destroy().catch(() => undefined);
  }
}
