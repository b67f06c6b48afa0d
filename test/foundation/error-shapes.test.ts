import test from 'ava';
import { GatewayError, STATUS_OF, type ErrorCode } from '../../domain/errors';
import { errorBody, shapeOfPath } from '../../gateway/errors/shapes';

// Spec 1 section 7, row by row: code -> [status, first-shape type, messages type, generate-content status].
const TABLE: Array<[ErrorCode, number, string, string, string]> = [
  ['model_not_found', 400, 'invalid_request_error', 'not_found_error', 'NOT_FOUND'],
  ['model_not_allowed', 400, 'invalid_request_error', 'invalid_request_error', 'INVALID_ARGUMENT'],
  ['invalid_request', 400, 'invalid_request_error', 'invalid_request_error', 'INVALID_ARGUMENT'],
  ['tool_not_supported', 400, 'invalid_request_error', 'invalid_request_error', 'INVALID_ARGUMENT'],
  ['invalid_idempotency_key', 400, 'invalid_request_error', 'invalid_request_error', 'INVALID_ARGUMENT'],
  ['idempotency_key_reuse', 409, 'invalid_request_error', 'invalid_request_error', 'ALREADY_EXISTS'],
  ['idempotency_in_flight', 409, 'invalid_request_error', 'invalid_request_error', 'ALREADY_EXISTS'],
  ['idempotency_response_not_cached', 409, 'invalid_request_error', 'invalid_request_error', 'ALREADY_EXISTS'],
  ['invalid_api_key', 401, 'authentication_error', 'authentication_error', 'UNAUTHENTICATED'],
  ['quota_exceeded', 402, 'insufficient_quota', 'billing_error', 'RESOURCE_EXHAUSTED'],
  ['permission_denied', 403, 'permission_error', 'permission_error', 'PERMISSION_DENIED'],
  ['rate_limit_exceeded', 429, 'rate_limit_error', 'rate_limit_error', 'RESOURCE_EXHAUSTED'],
  ['internal_error', 500, 'server_error', 'api_error', 'INTERNAL'],
  ['upstream_unreachable', 502, 'api_error', 'api_error', 'UNAVAILABLE'],
  ['no_channel_available', 503, 'server_error', 'overloaded_error', 'UNAVAILABLE'],
  ['upstream_timeout', 504, 'api_error', 'api_error', 'DEADLINE_EXCEEDED'],
];

for (const [code, status, openaiType, messagesType, geminiStatus] of TABLE) {
  test(`${code}: ${status} in all three shapes`, (t) => {
    const err = new GatewayError(code, `m-${code}`);
    t.is(STATUS_OF[code], status);
    t.deepEqual(errorBody(err, 'openai'), { error: { message: `m-${code}`, type: openaiType, code } });
    t.deepEqual(errorBody(err, 'messages'), { type: 'error', error: { type: messagesType, message: `m-${code}` } });
    t.deepEqual(errorBody(err, 'generate-content'), { error: { code: status, message: `m-${code}`, status: geminiStatus } });
  });
}

test('the string code exists only in the first shape; 402 and 429 differ only by number on generate-content', (t) => {
  const q = errorBody(new GatewayError('quota_exceeded', 'x'), 'generate-content') as { error: { code: number; status: string } };
  const r = errorBody(new GatewayError('rate_limit_exceeded', 'x'), 'generate-content') as { error: { code: number; status: string } };
  t.is(q.error.status, r.error.status);
  t.not(q.error.code, r.error.code);
  t.false(JSON.stringify(errorBody(new GatewayError('quota_exceeded', 'x'), 'messages')).includes('quota_exceeded'));
});

test('shape follows the endpoint', (t) => {
  t.is(shapeOfPath('/v1/messages'), 'messages');
  t.is(shapeOfPath('/v1beta/models/gemini-2.5-pro:generateContent'), 'generate-content');
  t.is(shapeOfPath('/v1/chat/completions'), 'openai');
  t.is(shapeOfPath('/v1/responses'), 'openai');
  t.is(shapeOfPath('/v1/images/generations'), 'openai');
});
