// Error bodies in each vendor's own shape (as they document them):
//   OpenAI     {"error":{"message","type","param","code"}}
//   Anthropic  {"type":"error","error":{"type","message"},"request_id"}
//   Gemini     {"error":{"code":<number>,"message","status"}}
import { makeId } from './text';

export type Dialect = 'openai' | 'anthropic' | 'gemini';

export function openaiError(message: string, type: string, param: string | null = null, code: string | null = null): string {
  return JSON.stringify({ error: { message, type, param, code } });
}

export function anthropicError(type: string, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: makeId('req_011', 22) });
}

export function geminiError(code: number, message: string, status: string): string {
  return JSON.stringify({ error: { code, message, status } });
}

const OPENAI_BY_STATUS: Record<number, [string, string, string | null]> = {
  400: ['Invalid request.', 'invalid_request_error', null],
  401: ['Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.', 'invalid_request_error', 'invalid_api_key'],
  403: ['You are not allowed to sample from this model', 'invalid_request_error', null],
  404: ['The model does not exist or you do not have access to it.', 'invalid_request_error', 'model_not_found'],
  429: ['Rate limit reached for requests. Please try again later.', 'requests', 'rate_limit_exceeded'],
  500: ['The server had an error while processing your request. Sorry about that!', 'server_error', null],
  502: ['Bad gateway.', 'server_error', null],
  503: ['The server is overloaded or not ready yet.', 'server_error', null],
  504: ['Gateway timeout.', 'server_error', null],
};

const ANTHROPIC_BY_STATUS: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  402: ['billing_error', 'Your credit balance is too low to access the Anthropic API.'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'The requested resource could not be found.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'],
  500: ['api_error', 'Internal server error'],
  503: ['overloaded_error', 'Overloaded'],
  504: ['timeout_error', 'Request timed out'],
  529: ['overloaded_error', 'Overloaded'],
};

const GEMINI_BY_STATUS: Record<number, [string, string]> = {
  400: ['INVALID_ARGUMENT', 'Request contains an invalid argument.'],
  401: ['UNAUTHENTICATED', 'Request had invalid authentication credentials.'],
  403: ['PERMISSION_DENIED', 'The caller does not have permission.'],
  404: ['NOT_FOUND', 'Requested entity was not found.'],
  409: ['ABORTED', 'The operation was aborted.'],
  429: ['RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'],
  499: ['CANCELLED', 'The operation was cancelled.'],
  500: ['INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'],
  501: ['NOT_IMPLEMENTED', 'Method not implemented.'],
  503: ['UNAVAILABLE', 'The model is overloaded. Please try again later.'],
  504: ['DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.'],
};

/** The body a vendor would send for `status` when the fault gives none. */
export function defaultErrorBody(dialect: Dialect, status: number): string {
  if (dialect === 'anthropic') {
    const [type, message] = ANTHROPIC_BY_STATUS[status] ?? (status >= 500 ? ['api_error', 'Internal server error'] : ['invalid_request_error', `HTTP ${status}`]);
    return anthropicError(type, message);
  }
  if (dialect === 'gemini') {
    const [st, message] = GEMINI_BY_STATUS[status] ?? (status >= 500 ? ['INTERNAL', 'Internal error.'] : ['FAILED_PRECONDITION', `HTTP ${status}`]);
    return geminiError(status, message, st);
  }
  const [message, type, code] = OPENAI_BY_STATUS[status] ?? (status >= 500 ? ['The server had an error while processing your request.', 'server_error', null] : [`HTTP ${status}`, 'invalid_request_error', null]);
  return openaiError(message, type, null, code);
}
