import { z } from 'zod';
import { UsageQuery } from '../../routes/usage';
import { KbQuery, ListQuery as TagQuery, SearchQuery } from '../../routes/wiki';
import { DifyRequest } from '../../../capabilities/knowledge/dify';
import { CheckoutBody } from '../../routes/payments';
import { KEY_ERRORS, type Operation } from '../registry';

/** Discovery, balance, billing, usage, knowledge-base reads, Dify and MCP (spec 1 sections 4.5-4.7, spec 2 section 4.8, spec 3). */

const ModelList = z.looseObject({ object: z.literal('list'), data: z.array(z.looseObject({ id: z.string(), object: z.literal('model') })) });
const Balance = z.looseObject({ object: z.literal('key.balance'), remaining_usd: z.string(), used_usd: z.string(), total_usd: z.string(), expires_at: z.number().nullable() });

const get = (path: string, operationId: string, summary: string, tag: string, opts: Partial<Operation> = {}): Operation => ({
  method: 'get', path, operationId, summary, tag, auth: 'key', errors: 'openai', errorStatuses: KEY_ERRORS, responses: { 200: { description: 'OK' } }, ...opts,
});

const Ignored = z.object({ start_date: z.string().optional(), end_date: z.string().optional() });

export const accountOperations: Operation[] = [
  get('/healthz', 'health', 'Liveness: the process answers (no store is asked; outages are /readyz\'s)', 'Service', { auth: 'none', errorStatuses: [], responses: { 200: { description: 'Healthy', schema: z.looseObject({ status: z.literal('ok'), models: z.number() }) } } }),
  get('/readyz', 'ready', 'Readiness: MongoDB, Redis and Temporal each answer within 4 s (503 names the failing ones)', 'Service', { auth: 'none', errorStatuses: [], responses: {
    200: { description: 'Ready', schema: z.looseObject({ status: z.literal('ready'), checks: z.record(z.string(), z.string()) }) },
    503: { description: 'A dependency is down', schema: z.looseObject({ status: z.literal('not ready'), checks: z.record(z.string(), z.string()) }) },
  } }),
  get('/v1/models', 'listModels', 'Model discovery (filtered by the key\'s allowed_models)', 'Models', {
    auth: 'key-header', description: 'Accepts only `Authorization: Bearer` and `x-api-key`; `?key=` gives 401.', responses: { 200: { description: 'Registry entries', schema: ModelList } },
  }),
  get('/v1/models/{model}', 'retrieveModel', 'One registry entry by id or alias (404 `model_not_found` when unknown or outside the key\'s allowed_models)', 'Models', {
    auth: 'key-header', params: z.object({ model: z.string().min(1).meta({ examples: ['gpt-5'] }) }), errorStatuses: [...KEY_ERRORS, 404],
    description: 'What `GET /v1/models` lists for this key, one entry at a time (the SDKs\' models.retrieve). A path ending in one of Google\'s model methods (`:generateContent`...) is that method instead, served by POST.',
    responses: { 200: { description: 'Registry entry', schema: z.looseObject({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string() }) } },
  }),
  get('/api/v1/models/public', 'listPublicModels', 'The public catalogue: prices, capabilities, callable, endpoint_type, protocol matrix', 'Models', { auth: 'none', errorStatuses: [], responses: { 200: { description: 'Catalogue', schema: ModelList } } }),
  get('/v1/key/balance', 'getBalance', 'The key\'s balance object', 'Billing', { responses: { 200: { description: 'Balance', schema: Balance } } }),
  ...['/v1', ''].flatMap((prefix): Operation[] => [
    get(`${prefix}/dashboard/billing/subscription`, `billingSubscription${prefix ? '' : 'Root'}`, `Billing subscription object${prefix ? '' : ' (without /v1)'}`, 'Billing', { errorStatuses: [401] }),
    get(`${prefix}/dashboard/billing/usage`, `billingUsage${prefix ? '' : 'Root'}`, `Billing usage object, cumulative${prefix ? '' : ' (without /v1)'}`, 'Billing', { errorStatuses: [401], query: Ignored }),
  ]),
  {
    method: 'post', path: '/api/v1/billing/checkout', operationId: 'createCheckout', tag: 'Billing', auth: 'key-header', errors: 'openai', errorStatuses: [...KEY_ERRORS, 404, 502],
    summary: 'Start a top-up: a Stripe Checkout Session for amount_usd (at least 134.8, whole cents); pay at `url`',
    description: 'An API key of the account, or a console session (cookie and `x-csrf-token`). The signed Stripe event credits the wallet once (docs/payments.md).',
    body: { schema: CheckoutBody, example: { amount_usd: 150 } },
    responses: { 201: { description: 'The pending top-up', schema: z.looseObject({ id: z.string(), url: z.string(), amount_usd: z.string(), status: z.literal('pending'), session_id: z.string() }) } },
  },
  get('/api/v1/billing/topups/{id}', 'getTopUp', 'A top-up of the account: pending, paid or failed, and what refunds and disputes took back', 'Billing', {
    auth: 'key-header', params: z.object({ id: z.string().min(1) }), errorStatuses: [...KEY_ERRORS, 404],
    responses: { 200: { description: 'The top-up', schema: z.looseObject({ id: z.string(), amount_usd: z.string(), status: z.enum(['creating', 'pending', 'paid', 'failed']), refunded_usd: z.string(), disputed_usd: z.string() }) } },
  }),
  get('/api/v1/usage', 'getUsage', 'Usage totals (rejected calls included) and recent rows', 'Usage', { query: UsageQuery, emptyQueryIsAbsent: true }),
  get('/api/v1/usage/export', 'exportUsage', 'Usage rows as CSV (at most 10000, then x-truncated: true)', 'Usage', {
    query: UsageQuery.omit({ limit: true }), emptyQueryIsAbsent: true, responses: { 200: { description: 'CSV, columns of spec 2 section 2.5', contentType: 'text/csv' } },
  }),

  get('/api/v1/ext/wiki/search', 'wikiSearch', 'Lexical search of a knowledge base', 'Knowledge', { query: SearchQuery, emptyQueryIsAbsent: true, errorStatuses: [...KEY_ERRORS, 404] }),
  get('/api/v1/ext/wiki/kbs', 'wikiBases', 'Readable knowledge bases', 'Knowledge'),
  get('/api/v1/ext/wiki/tags', 'wikiTags', 'Tags of a base with counts', 'Knowledge', { query: KbQuery, errorStatuses: [...KEY_ERRORS, 404] }),
  get('/api/v1/ext/wiki/tags/{tag}', 'wikiTag', 'Pages under a tag', 'Knowledge', { params: z.object({ tag: z.string().min(1) }), query: TagQuery, emptyQueryIsAbsent: true, errorStatuses: [...KEY_ERRORS, 404] }),
  get('/api/v1/ext/wiki/pages', 'wikiPages', 'Batch read (`ids=a,b,c`, at most 25)', 'Knowledge', {
    query: KbQuery.extend({ ids: z.string().meta({ description: 'Comma-separated page ids; empty gives 400' }) }), errorStatuses: [...KEY_ERRORS, 404],
  }),
  ...(['', '/backlinks', '/source'] as const).map((tail) => get(`/api/v1/ext/wiki/pages/{id}${tail}`, `wikiPage${tail.replace('/', '_')}`, tail === '' ? 'One full page' : tail === '/backlinks' ? 'Pages linking to a page' : 'Source document info and a 1-hour link', 'Knowledge', {
    params: z.object({ id: z.string().min(1) }), query: KbQuery, errorStatuses: [...KEY_ERRORS, 404],
  })),
  {
    method: 'get', path: '/kb/files/{key}', operationId: 'kbSourceFile', summary: 'A knowledge-base source file by its signed link (1 hour)', tag: 'Knowledge',
    auth: 'signed', errors: 'openai', errorStatuses: [403, 404],
    params: z.object({ key: z.string().min(1) }), query: z.object({ expires: z.string().optional(), sig: z.string().optional() }),
    responses: { 200: { description: 'The file', contentType: 'application/octet-stream' } },
  },
  {
    method: 'post', path: '/api/v1/integrations/dify/retrieval', operationId: 'difyRetrieval', summary: "Dify External Knowledge API retrieval", tag: 'Knowledge',
    description: '`knowledge_id` is a base id or `*` (every readable base). Errors in Dify\'s `{error_code, error_msg}` shape.',
    auth: 'key-header', errors: 'dify', errorStatuses: [400, 401, 404, 413, 429],
    body: { schema: DifyRequest, example: { knowledge_id: 'default', query: 'refund policy', retrieval_setting: { top_k: 3, score_threshold: 0 } } },
    responses: { 200: { description: 'Records', schema: z.looseObject({ records: z.array(z.looseObject({ content: z.string(), score: z.number(), title: z.string() })) }) } },
  },
  {
    method: 'post', path: '/mcp', operationId: 'mcp', summary: 'MCP server (Streamable HTTP, stateless, JSON responses; 6 read-only tools)', tag: 'Knowledge',
    description: 'JSON-RPC 2.0 messages: `initialize`, `tools/list`, `tools/call` (search_wiki, read_page, read_pages, list_by_tag, backlinks, get_source). Send `Accept: application/json, text/event-stream`.',
    auth: 'key-header', errors: 'mcp', errorStatuses: [400, 401, 406, 415, 429],
    headers: [{ name: 'Accept', description: 'application/json, text/event-stream', schema: { type: 'string', example: 'application/json, text/event-stream' } }],
    body: {
      schema: z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string(), id: z.union([z.string(), z.number()]).optional(), params: z.looseObject({}).optional() }),
      example: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    },
    responses: { 200: { description: 'JSON-RPC result or error' }, 202: { description: 'A notification was accepted (no body)', contentType: null } },
  },

  get('/v1/tasks/{id}/deliveries', 'taskDeliveries', 'The webhook delivery log of a task of the key\'s account', 'Webhooks', {
    params: z.object({ id: z.string().min(1) }), errorStatuses: [...KEY_ERRORS, 404],
    description: '`status` is `none` when the task was submitted without a `callback_url`.',
  }),
  {
    method: 'post', path: '/v1/tasks/{id}/deliveries/replay', operationId: 'replayTaskWebhook', summary: 'Send a finished task\'s webhook again (same event id)', tag: 'Webhooks',
    auth: 'key', errors: 'openai', errorStatuses: [...KEY_ERRORS, 404, 409],
    description: '400 if the task has no `callback_url` or has not ended; 409 while a delivery is under way.',
    params: z.object({ id: z.string().min(1) }), responses: { 202: { description: 'The replay, started' } },
  },
  get('/api/v1/logs/{id}', 'callLog', 'One call by request id or task id', 'Usage', {
    auth: 'key-or-admin', params: z.object({ id: z.string().min(1) }), errorStatuses: [...KEY_ERRORS, 404],
    description: 'With an API key: calls of the key\'s account only (404 for any other id). With the operator token (`Authorization: Bearer <ADMIN_TOKEN>`): any call, plus the task\'s Temporal workflow link.',
  }),
];
