import { GatewayError } from '../../domain/errors';
import type { ErrorShape } from '../context';

/** Which error body shape an endpoint speaks (spec 1 section 7). */
export function shapeOfPath(path: string): ErrorShape {
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'messages';
  if (path.startsWith('/v1beta/')) return 'generate-content';
  return 'openai';
}

/** First-shape `type` per code. */
const OPENAI_TYPE: Record<string, string> = {
  invalid_api_key: 'authentication_error',
  authentication_error: 'authentication_error',
  quota_exceeded: 'insufficient_quota',
  permission_denied: 'permission_error',
  rate_limit_exceeded: 'rate_limit_error',
  internal_error: 'server_error',
  upstream_error: 'api_error',
  upstream_unreachable: 'api_error',
  upstream_timeout: 'api_error',
  no_channel_available: 'server_error',
};

/** Messages-shape `type` per code; 400-class codes default to invalid_request_error. */
const MESSAGES_TYPE: Record<string, string> = {
  model_not_found: 'not_found_error',
  not_found: 'not_found_error',
  invalid_api_key: 'authentication_error',
  authentication_error: 'authentication_error',
  quota_exceeded: 'billing_error',
  permission_denied: 'permission_error',
  rate_limit_exceeded: 'rate_limit_error',
  internal_error: 'api_error',
  upstream_error: 'api_error',
  upstream_unreachable: 'api_error',
  upstream_timeout: 'api_error',
  no_channel_available: 'overloaded_error',
};

/** generate-content `status` per code; 402 and 429 share RESOURCE_EXHAUSTED. */
const GEMINI_STATUS: Record<string, string> = {
  model_not_found: 'NOT_FOUND',
  not_found: 'NOT_FOUND',
  idempotency_key_reuse: 'ALREADY_EXISTS',
  idempotency_in_flight: 'ALREADY_EXISTS',
  idempotency_response_not_cached: 'ALREADY_EXISTS',
  invalid_api_key: 'UNAUTHENTICATED',
  authentication_error: 'UNAUTHENTICATED',
  quota_exceeded: 'RESOURCE_EXHAUSTED',
  permission_denied: 'PERMISSION_DENIED',
  rate_limit_exceeded: 'RESOURCE_EXHAUSTED',
  internal_error: 'INTERNAL',
  upstream_error: 'UNAVAILABLE',
  upstream_unreachable: 'UNAVAILABLE',
  no_channel_available: 'UNAVAILABLE',
  upstream_timeout: 'DEADLINE_EXCEEDED',
};

export function errorBody(err: GatewayError, shape: ErrorShape): Record<string, unknown> {
  switch (shape) {
    case 'messages':
      return {
        type: 'error',
        error: { type: MESSAGES_TYPE[err.code] ?? (err.status >= 500 ? 'api_error' : 'invalid_request_error'), message: err.message },
      };
    case 'generate-content':
      return {
        error: { code: err.status, message: err.message, status: GEMINI_STATUS[err.code] ?? (err.status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT') },
      };
    default:
      return {
        error: {
          message: err.message,
          type: err.type ?? OPENAI_TYPE[err.code] ?? (err.status >= 500 ? 'api_error' : 'invalid_request_error'),
          code: err.code,
          ...(err.param ? { param: err.param } : {}),
        },
      };
  }
}
