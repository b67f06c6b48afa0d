import { GatewayError, type ErrorCode } from '../domain/errors';
import { UpstreamHttpError, UpstreamTransportError } from '../domain/channel-ladder';

/**
 * Upstream failures (domain/channel-ladder.ts) become the client's
 * GatewayError here: chat passes the upstream's status through (spec 1
 * section 7); the gateway's own vendor calls (music assets, clip templates)
 * answer 502 or 504.
 */

/** Upstream non-2xx passes through with its status; codes mapped as spec 1 section 7 says. */
export function upstreamCode(status: number): ErrorCode {
  if (status === 400 || status === 422) return 'invalid_request';
  if (status === 401) return 'invalid_api_key';
  if (status === 403) return 'permission_denied';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limit_exceeded';
  return 'upstream_error';
}

const PASSED_HEADERS = /^(retry-after|x-ratelimit-.*)$/i;

/** The upstream's own message, whatever vendor shape it came in. */
function upstreamMessage(text: string): string | undefined {
  try {
    const j = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown } | Array<{ error?: { message?: unknown } }>;
    const first = Array.isArray(j) ? j[0] : j;
    const e = first?.error;
    if (typeof e === 'string') return e;
    if (e && typeof e.message === 'string') return e.message;
    if (!Array.isArray(j) && typeof j.message === 'string') return j.message;
  } catch {
    /* not JSON */
  }
  return text.trim() ? text.trim().slice(0, 500) : undefined;
}

export function upstreamError(status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): GatewayError {
  const code = upstreamCode(status);
  const passed: Record<string, string> = {};
  // A 429 keeps the upstream's own Retry-After / x-ratelimit-* (present: the upstream platform's
  // limit; absent: an upstream-side overload); the gateway's own 429s always carry them.
  if (status === 429) {
    for (const [k, v] of Object.entries(headers)) if (PASSED_HEADERS.test(k) && typeof v === 'string') passed[k] = v;
  }
  const message = upstreamMessage(bodyText) ?? `upstream returned HTTP ${status}`;
  return new GatewayError(code, `upstream error: ${message}`, {
    status: status >= 400 && status < 600 ? status : 502,
    type: code === 'not_found' ? 'invalid_request_error' : undefined,
    headers: Object.keys(passed).length ? passed : undefined,
  });
}

/** A chat request's ladder ended in this failure: the client's error (anything else is returned as it is). */
export function chatUpstreamFailure(err: unknown, timeoutMs: number): unknown {
  if (err instanceof UpstreamHttpError) return upstreamError(err.status, err.body, err.headers);
  if (err instanceof UpstreamTransportError) {
    return err.kind === 'timeout'
      ? new GatewayError('upstream_timeout', `upstream did not answer within ${timeoutMs / 1000} s`)
      : new GatewayError('upstream_unreachable', err.message);
  }
  return err;
}

/** A gateway-side vendor call (`what`: music assets, clip templates) failed: 502 upstream_error, 504 or 502 unreachable. */
export function upstreamFailure(err: unknown, what: string): unknown {
  if (err instanceof UpstreamHttpError) return new GatewayError('upstream_error', `${what}: upstream HTTP ${err.status}`, { status: 502 });
  if (err instanceof UpstreamTransportError) {
    return err.kind === 'timeout'
      ? new GatewayError('upstream_timeout', `${what}: upstream timed out`)
      : new GatewayError('upstream_unreachable', `${what}: upstream unreachable`);
  }
  return err;
}
