import type { ErrorCode, GatewayError } from '../../domain/errors';
import { generateContentErrorBody, messagesErrorBody, openAiErrorBody } from '../../domain/error-bodies';
import type { ErrorShape } from '../context';
import { MODEL_METHOD_PATH } from '../routes/model-paths';

/**
 * Which error body shape an endpoint speaks (spec 1 section 7): the native
 * generate-content endpoints (under /v1beta, and `/v1/models/{model}:...`)
 * speak Google's, the messages endpoint Anthropic's, everything else OpenAI's.
 */
export function shapeOfPath(path: string): ErrorShape {
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'messages';
  if (path.startsWith('/v1beta/') || path === '/v1beta') return 'generate-content';
  if (MODEL_METHOD_PATH.test(path)) return 'generate-content';
  return 'openai';
}

/** First-shape `type` per code (spec 1 section 7, media 400s as invalid_request_error). */
const OPENAI_TYPE: Record<ErrorCode, string> = {
  model_not_found: 'invalid_request_error',
  model_not_allowed: 'invalid_request_error',
  model_no_vision: 'invalid_request_error',
  invalid_request: 'invalid_request_error',
  invalid_request_error: 'invalid_request_error',
  tool_not_supported: 'invalid_request_error',
  invalid_idempotency_key: 'invalid_request_error',
  idempotency_key_reuse: 'invalid_request_error',
  idempotency_in_flight: 'invalid_request_error',
  idempotency_response_not_cached: 'invalid_request_error',
  not_found: 'invalid_request_error',
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

/** Messages-shape `type` per code: the first shape's, except where Anthropic names the kind otherwise. */
const MESSAGES_TYPE: Record<ErrorCode, string> = {
  ...OPENAI_TYPE,
  model_not_found: 'not_found_error',
  not_found: 'not_found_error',
  quota_exceeded: 'billing_error',
  internal_error: 'api_error',
  no_channel_available: 'overloaded_error',
};

/** generate-content `status` per code; 402 and 429 share RESOURCE_EXHAUSTED. */
const GEMINI_STATUS: Record<ErrorCode, string> = {
  model_not_found: 'NOT_FOUND',
  not_found: 'NOT_FOUND',
  model_not_allowed: 'INVALID_ARGUMENT',
  model_no_vision: 'INVALID_ARGUMENT',
  invalid_request: 'INVALID_ARGUMENT',
  invalid_request_error: 'INVALID_ARGUMENT',
  tool_not_supported: 'INVALID_ARGUMENT',
  invalid_idempotency_key: 'INVALID_ARGUMENT',
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

/** A method the route does not answer: Google's status for it. */
const GEMINI_STATUS_OF_HTTP: Partial<Record<number, string>> = { 405: 'UNIMPLEMENTED', 413: 'INVALID_ARGUMENT' };

/** The error as the body of the given shape. */
export function errorBody(err: GatewayError, shape: ErrorShape): Record<string, unknown> {
  switch (shape) {
    case 'messages':
      return messagesErrorBody(MESSAGES_TYPE[err.code], err.message);
    case 'generate-content':
      return generateContentErrorBody(err.status, err.message, GEMINI_STATUS_OF_HTTP[err.status] ?? GEMINI_STATUS[err.code]);
    default:
      return openAiErrorBody({ message: err.message, type: err.type ?? OPENAI_TYPE[err.code], code: err.code, ...(err.param ? { param: err.param } : {}) });
  }
}
