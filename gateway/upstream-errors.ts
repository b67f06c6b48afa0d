import { GatewayError, type ErrorCode } from '../../domain/errors';

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
