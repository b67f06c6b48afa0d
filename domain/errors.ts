/**
 * One typed error for everything the gateway refuses. The `code` is the
 * chat-completions-shape string code of spec 1 section 7; the HTTP edge
 * (gateway/middleware/error-handler.ts + gateway/errors/shapes.ts) renders it
 * in the shape of the endpoint that was called.
 */
export type ErrorCode =
  | 'model_not_found'
  | 'model_not_allowed'
  | 'model_no_vision'
  | 'invalid_request'
  | 'tool_not_supported'
  | 'invalid_idempotency_key'
  | 'idempotency_key_reuse'
  | 'idempotency_in_flight'
  | 'idempotency_response_not_cached'
  | 'invalid_api_key'
  | 'authentication_error'
  | 'invalid_request_error'
  | 'quota_exceeded'
  | 'permission_denied'
  | 'not_found'
  | 'rate_limit_exceeded'
  | 'internal_error'
  | 'upstream_error'
  | 'upstream_unreachable'
  | 'no_channel_available'
  | 'upstream_timeout';

export interface GatewayErrorOptions {
  /** Field of the request body that is at fault, when there is one. */
  param?: string;
  /** Extra response headers (Retry-After, x-ratelimit-*). */
  headers?: Record<string, string>;
  /** Override the status the code implies (upstream pass-through, media 403/404 variants). */
  status?: number;
  /** Override the first-shape `type` (media endpoints use invalid_request_error for 400s etc.). */
  type?: string;
  cause?: unknown;
}

/** HTTP status implied by each code (spec 1 section 7). */
export const STATUS_OF: Record<ErrorCode, number> = {
  model_not_found: 400,
  model_not_allowed: 400,
  model_no_vision: 400,
  invalid_request: 400,
  tool_not_supported: 400,
  invalid_idempotency_key: 400,
  idempotency_key_reuse: 409,
  idempotency_in_flight: 409,
  idempotency_response_not_cached: 409,
  invalid_api_key: 401,
  authentication_error: 401,
  invalid_request_error: 400,
  quota_exceeded: 402,
  permission_denied: 403,
  not_found: 404,
  rate_limit_exceeded: 429,
  internal_error: 500,
  upstream_error: 502,
  upstream_unreachable: 502,
  no_channel_available: 503,
  upstream_timeout: 504,
};

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param?: string;
  readonly headers?: Record<string, string>;
  readonly type?: string;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = options.status ?? STATUS_OF[code];
    this.param = options.param;
    this.headers = options.headers;
    this.type = options.type;
  }
}

/** The exact 401 messages of spec 1 section 7. */
export const AUTH_MESSAGES = {
  missing: (detail: string) => `authentication failed: missing or malformed api key (${detail})`,
  invalid: 'authentication failed: invalid api key',
  revoked: 'authentication failed: api key revoked',
  expired: 'authentication failed: api key expired',
  inactive: 'authentication failed: account is not active',
} as const;

/** The 402 text: "insufficient balance, please top up and retry". */
export const QUOTA_MESSAGE = '余额不足，请充值后重试';

export const errors = {
  invalidRequest: (message: string, param?: string) => new GatewayError('invalid_request', message, { param }),
  modelNotFound: (model: string) =>
    new GatewayError('model_not_found', `The model '${model}' does not exist or is not available`, { param: 'model' }),
  modelNotAllowed: (model: string) =>
    new GatewayError('model_not_allowed', `This API key is not allowed to use the model '${model}'`, { param: 'model' }),
  noChannel: (model: string, protocol: string) =>
    new GatewayError('no_channel_available', `No channel is available for model '${model}' on the ${protocol} endpoint`),
  quota: () => new GatewayError('quota_exceeded', QUOTA_MESSAGE),
  auth: (message: string) => new GatewayError('invalid_api_key', message),
  notFound: (message: string) => new GatewayError('not_found', message, { status: 404, type: 'invalid_request_error' }),
  /** An agent key calls only POST /v1/chat/completions (spec 3 section 5); it never acts as an ordinary key. */
  agentKeyEndpoint: () =>
    new GatewayError('permission_denied', 'this is an agent key: it may call only POST /v1/chat/completions'),
  /** Spec 3 section 7: agent deleted, unpublished or of another enterprise; model off the whitelist; base unreadable. */
  agentForbidden: (message: string) => new GatewayError('permission_denied', message),
};
