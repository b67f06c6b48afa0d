import { z } from 'zod';
import { ERROR_SCHEMAS, type ErrorFamily } from './errors';
import type { Operation } from './registry';
import { OPERATIONS } from './operations/index';

/**
 * The OpenAPI 3.1 document of the public and management API, built from the
 * operation registry (`gateway/openapi/operations/`). Schemas are zod 4's own JSON
 * Schema output (`z.toJSONSchema`, draft 2020-12: the dialect of OpenAPI
 * 3.1) of the schemas the routes validate with, on the input side (what a
 * client sends: defaults optional, coercions as their input type).
 * Refinements the JSON Schema cannot carry (public URLs, date formats)
 * are in the descriptions of the errors they produce: a 400 naming the field.
 */

type Json = Record<string, unknown>;

export const TRACE_HEADER_COMPONENT = 'GatewayTrace';

const SECURITY_SCHEMES = {
  ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key (first in the lookup order)' },
  GoogApiKey: { type: 'apiKey', in: 'header', name: 'x-goog-api-key', description: 'The API key, as Google\'s SDKs send it' },
  ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'key', description: 'The API key as `?key=` (discouraged: it lands in logs; redacted in ours)' },
  BearerKey: { type: 'http', scheme: 'bearer', description: 'The API key as `Authorization: Bearer sk-…` (last in the lookup order)' },
  AdminToken: { type: 'http', scheme: 'bearer', description: 'The operator token (ADMIN_TOKEN) of the management API' },
};

const SECURITY: Record<Operation['auth'], Array<Record<string, string[]>>> = {
  key: [{ ApiKeyHeader: [] }, { GoogApiKey: [] }, { ApiKeyQuery: [] }, { BearerKey: [] }],
  'key-header': [{ BearerKey: [] }, { ApiKeyHeader: [] }],
  admin: [{ AdminToken: [] }],
  'key-or-admin': [{ ApiKeyHeader: [] }, { GoogApiKey: [] }, { ApiKeyQuery: [] }, { BearerKey: [] }, { AdminToken: [] }],
  none: [],
  signed: [],
};

const FAMILY_DESCRIPTION: Record<ErrorFamily, string> = {
  openai: 'Error in the OpenAI shape',
  anthropic: 'Error in the Anthropic shape',
  gemini: 'Error in the Gemini shape',
  media: 'Error in the OpenAI shape (media)',
  management: 'Error in the OpenAI shape (management)',
  dify: "Error in Dify's shape",
  mcp: 'JSON-RPC error',
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request (the message and `param` name the field)',
  401: 'Missing, invalid, revoked or expired credential',
  402: 'Balance exhausted or the pre-charge estimate is above it',
  403: 'Refused (upstream refusal, or a signed link that is not valid)',
  404: 'Not found (or not readable by this key)',
  405: 'Method not allowed (with `Allow`)',
  406: 'Not acceptable (MCP needs `Accept: application/json, text/event-stream`)',
  409: 'Idempotency conflict, or a state that forbids the change',
  413: 'Request body too large',
  415: 'Unsupported media type',
  429: 'Rate limited (Retry-After and x-ratelimit-* headers)',
  502: 'Upstream failure',
  503: 'No channel available for this model here',
};

/** Converts zod schemas and collects their `$defs` as components, so every `$ref` resolves within the document. */
class SchemaSet {
  readonly components: Record<string, Json> = {};

  /** JSON Schema of what a client sends. */
  input(name: string, schema: z.ZodType): Json {
    return this.convert(name, schema, 'input');
  }

  /** JSON Schema of what the gateway answers. */
  output(name: string, schema: z.ZodType): Json {
    return this.convert(name, schema, 'output');
  }

  /** A named component; the returned value is its `$ref`. */
  component(name: string, schema: z.ZodType, io: 'input' | 'output'): Json {
    if (!this.components[name]) this.components[name] = this.convert(name, schema, io);
    return { $ref: `#/components/schemas/${name}` };
  }

  private convert(name: string, schema: z.ZodType, io: 'input' | 'output'): Json {
    const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12', cycles: 'ref', reused: 'inline' }) as Json;
    delete json.$schema;
    const defs = json.$defs as Record<string, Json> | undefined;
    delete json.$defs;
    const rename = (def: string) => `${name}_${def}`;
    const rewrite = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (!node || typeof node !== 'object') return node;
      const out: Json = {};
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') {
          out[k] = v === '#' ? `#/components/schemas/${name}` : v.startsWith('#/$defs/') ? `#/components/schemas/${rename(v.slice(8))}` : v;
        } else out[k] = rewrite(v);
      }
      // zod writes an email as `format: email` plus the `pattern` it checks; the pattern is the rule (JSON Schema
      // validators differ on what `format: email` admits), so only the pattern stays.
      if (out.format === 'email' && typeof out.pattern === 'string') delete out.format;
      return out;
    };
    for (const [def, body] of Object.entries(defs ?? {})) this.components[rename(def)] = rewrite(body) as Json;
    const result = rewrite(json) as Json;
    // A self-reference (`#`) needs the root as a component of its own.
    if (JSON.stringify(result).includes(`"#/components/schemas/${name}"`)) this.components[name] ??= result;
    return result;
  }
}

/** Parameters from a zod object: one per property, required as the schema says. */
function parameters(set: SchemaSet, name: string, where: 'path' | 'query', schema: z.ZodObject | undefined, emptyIsAbsent = false): Json[] {
  if (!schema) return [];
  const json = set.input(name, schema);
  const props = (json.properties ?? {}) as Record<string, Json>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([param, s]) => {
    const { description, ...rest } = s;
    return {
      name: param,
      in: where,
      required: where === 'path' || required.has(param),
      ...(description ? { description } : {}),
      // An empty value counts as absent: say so, so that `?x=` is not taken for a value the route should refuse.
      ...(emptyIsAbsent ? { allowEmptyValue: true, schema: { anyOf: [rest, { const: '' }] } } : { schema: rest }),
    };
  });
}

const traced = { 'x-gateway-trace': { $ref: `#/components/headers/${TRACE_HEADER_COMPONENT}` } };

/** The other response headers the gateway sends (docs: rate limits, cost fields, translation), as components. */
const ANSWER_HEADERS: Record<string, Json> = {
  'x-gateway-cost': { description: 'What the call cost, in credits (a decimal string; a media task\'s once it is final)', schema: { type: 'string' } },
  'x-gateway-cost-held': { description: 'What a media task holds from the balance until it settles (credits)', schema: { type: 'string' } },
  'X-Protocol-Translation': { description: 'The gateway translated the call: `{client protocol}_to_{upstream protocol}` (spec 1 section 4.10)', schema: { type: 'string' } },
  'X-Protocol-Warning': { description: 'Request fields the translation dropped, joined by `; ` (absent when none)', schema: { type: 'string' } },
  'x-ratelimit-limit-requests': { description: 'The account\'s requests a minute (accounts with a limit)', schema: { type: 'string' } },
  'x-ratelimit-remaining-requests': { description: 'Requests left in the sliding minute', schema: { type: 'string' } },
  'x-ratelimit-reset-requests': { description: 'When the window has room again, e.g. `12s`', schema: { type: 'string' } },
  'x-ratelimit-limit-concurrency': { description: 'The account\'s concurrent requests (accounts with a limit)', schema: { type: 'string' } },
  'x-ratelimit-remaining-concurrency': { description: 'Concurrent requests left', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'string' } },
};
const headerRefs = (names: string[]): Json => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
const RATE_HEADERS = ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', 'x-ratelimit-limit-concurrency', 'x-ratelimit-remaining-concurrency'];

/** The headers of an operation's success answers beside the trace: by what it is (its tag and authentication). */
function answerHeaders(op: Operation): Json {
  const names: string[] = [];
  if (op.auth === 'key' || op.auth === 'key-header') names.push(...RATE_HEADERS);
  if (op.tag === 'Chat') names.push('x-gateway-cost', 'X-Protocol-Translation', 'X-Protocol-Warning');
  if (op.tag === 'Media') names.push('x-gateway-cost', 'x-gateway-cost-held');
  return { ...traced, ...headerRefs(names) };
}

function operationObject(set: SchemaSet, op: Operation): Json {
  const errorRef = { $ref: `#/components/schemas/${ERROR_SCHEMAS[op.errors].name}` };
  const errorResponse = (description: string, headers: Json = traced) => ({ description, headers, content: { 'application/json': { schema: errorRef } } });
  const answered = answerHeaders(op);
  const responses: Json = {};
  for (const [status, r] of Object.entries(op.responses)) {
    const schema = r.schema ? set.output(`${op.operationId}_${status}`, r.schema) : { type: 'object' };
    if (r.contentType === null) {
      responses[status] = { description: r.description, headers: answered };
      continue;
    }
    const types = (r.contentType ?? 'application/json').split(',').map((t) => t.trim());
    responses[status] = {
      description: r.description,
      headers: answered,
      // Streams and files: described in words, not schemas (an SSE stream is a series of events).
      content: Object.fromEntries(types.map((t) => [t, t === 'application/json' ? { schema } : {}])),
    };
  }
  for (const status of [...new Set(op.errorStatuses)].sort()) {
    const limited = status === 429 || status === 503;
    responses[String(status)] = errorResponse(`${STATUS_TEXT[status] ?? 'Error'}. ${FAMILY_DESCRIPTION[op.errors]}`,
      limited ? { ...traced, ...headerRefs(status === 429 ? ['Retry-After', ...RATE_HEADERS] : ['Retry-After']) } : traced);
  }
  responses.default = errorResponse(`Any other error. ${FAMILY_DESCRIPTION[op.errors]}`);

  const headers = (op.headers ?? []).map((h) => ({ name: h.name, in: 'header', required: !!h.required, description: h.description, schema: h.schema }));
  const out: Json = {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    security: SECURITY[op.auth],
    parameters: [
      ...parameters(set, `${op.operationId}_params`, 'path', op.params),
      ...parameters(set, `${op.operationId}_query`, 'query', op.query, op.emptyQueryIsAbsent),
      ...headers,
    ],
    responses,
  };
  if (op.body) {
    const ref = set.component(`${op.operationId}_body`, op.body.schema, 'input');
    const json = { schema: ref, ...(op.body.example !== undefined ? { example: op.body.example } : {}) };
    out.requestBody = {
      required: op.body.required ?? true,
      content: op.body.multipart === 'only'
        ? { 'multipart/form-data': json }
        : { 'application/json': json, ...(op.body.multipart ? { 'multipart/form-data': { schema: { type: 'object', additionalProperties: true } } } : {}) },
    };
  }
  return out;
}

export interface DocumentOptions {
  version: string;
}

/** The whole document. Pure: the same registry gives the same document. */
export function buildOpenApiDocument(opts: DocumentOptions, operations: Operation[] = OPERATIONS): Json {
  const set = new SchemaSet();
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    paths[op.path] ??= {};
    if (paths[op.path][op.method]) throw new Error(`openapi: ${op.method.toUpperCase()} ${op.path} is registered twice`);
    paths[op.path][op.method] = operationObject(set, op);
  }
  for (const { name, schema } of Object.values(ERROR_SCHEMAS)) set.components[name] = set.output(name, schema);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Model Gateway API',
      version: opts.version,
      description:
        'One API key, one prepaid wallet, every kind of model behind it: chat in four protocols, asynchronous media on Temporal, ' +
        'accounts and keys, knowledge-base reads. Errors come in the shape of the endpoint that was called (spec 1 section 7), ' +
        'and every response carries `x-gateway-trace`. The management API (`/admin/v1`) takes the operator token.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    tags: [...new Set(operations.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: set.components,
      securitySchemes: SECURITY_SCHEMES,
      headers: {
        [TRACE_HEADER_COMPONENT]: { required: true, description: 'The request id, for support and the call log', schema: { type: 'string', pattern: '^req_[0-9a-f]{24}$' } },
        ...ANSWER_HEADERS,
      },
    },
  };
}
