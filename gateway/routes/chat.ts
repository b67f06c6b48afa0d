import Router from '@koa/router';
import { z } from 'zod';
import { parseRequest } from '../../protocols';
import { errors } from '../../domain/errors';
import type { ServiceDeps } from '../deps';
import type { Ctx, GatewayState } from '../context';
import { authenticate } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { usageCapture } from '../middleware/usage-capture';
import { jsonBody } from '../middleware/body';
import { resolveModel } from '../model-access';
import { runChat, type ChatCall } from '../chat/pipeline';
import type { Model } from '../../domain/catalogue';
import { applyBuiltinToolRules, builtinToolsOf } from '../chat/builtin-tools';
import { serveAgentCall } from '../chat/agent-serve';
import { spentAgentKeyRefusal } from '../chat/agent-prelude';
import { validQuery } from '../middleware/validate';
import { batchLine } from '../middleware/batch-line';
import { MODEL_METHOD_PATH, MODEL_METHOD_ROUTE } from './model-paths';
import { capturedSegment } from './captured';

/** `?alt=` of streamGenerateContent: `sse` streams server-sent events, `json` (the default) a JSON array. */
export const StreamQuery = z.object({ alt: z.enum(['sse', 'json']).optional() });

/** Chat request bodies (images inline as base64 included). */
const CHAT_BODY_LIMIT = 32 * 1024 * 1024;

type Body = Record<string, any>;

/**
 * The pipeline input of an endpoint whose channels come straight from the catalogue and whose
 * stream always reports usage (messages, generate-content, responses).
 */
function catalogueCall(
  deps: ServiceDeps, ctx: Ctx, client: 'messages' | 'generate-content' | 'responses', model: Model, body: Body,
  p: Pick<ChatCall, 'stream' | 'maxTokens' | 'promptForEstimate' | 'jsonArrayStream'>,
  promptMember: string,
): ChatCall {
  return {
    client, model, body, raw: ctx.state.rawBody!, includeUsage: true, channels: deps.catalogue().channels(model, client), builtinToolPath: false,
    promptBytes: ctx.state.bodyMemberBytes?.get(promptMember), ...p,
  };
}

/** The four chat endpoints (spec 1 sections 4.1-4.4): validate, resolve, then the shared pipeline. */
export function chatRoutes(deps: ServiceDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const lineIds = batchLine(deps.config.KEY_ENCRYPTION_KEY);
  const chain = (endpoint: string) => [
    // A batch's line (capabilities/batches/line-auth.ts): its request id, usage row and ledger op are the line's.
    lineIds,
    usageCapture(deps, endpoint),
    // Agent keys call only chat completions (spec 3 section 5). Optimistic: the body is read, validated and
    // routed while the key's fresh state is read; the pipeline waits for it before the upstream call
    // (CHAT_AUTH_OVERLAP=upstream: before the answer).
    authenticate(deps, { methods: 'all', billable: true, touchLastUsed: true, optimistic: deps.config.CHAT_AUTH_OVERLAP !== 'off', ...(endpoint === 'chat.completions' ? { agentKeys: 'serve' as const, agentRefusal: (key) => spentAgentKeyRefusal(deps, key) } : {}) }),
    rateLimit(),
    jsonBody(CHAT_BODY_LIMIT, { memberBytes: true }),
  ];

  router.post('/v1/chat/completions', ...chain('chat.completions'), async (ctx: Ctx) => {
    // An agent key: its prelude makes the agent's call, then the same pipeline and billing.
    if (ctx.state.auth!.key.agent_id) return serveAgentCall(deps, ctx);
    const body = parseRequest('chat-completions', ctx.state.body) as Body;
    const stream = body.stream === true;
    // The client's mistake, answered here as OpenAI answers it (not an upstream attempt and an "upstream error").
    if (body.stream_options != null && !stream) throw errors.invalidRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
    const model = resolveModel(deps, ctx, body.model);
    const channels = deps.catalogue().channels(model, 'chat-completions');
    if (channels.length === 0) throw errors.noChannel(model.id, 'chat-completions');
    const builtins = builtinToolsOf(body.tools);
    return runChat(deps, ctx, {
      client: 'chat-completions',
      model,
      body,
      raw: ctx.state.rawBody!,
      stream,
      includeUsage: body.stream_options?.include_usage === true,
      maxTokens: body.max_completion_tokens ?? body.max_tokens,
      promptForEstimate: body.messages,
      promptBytes: ctx.state.bodyMemberBytes?.get('messages'),
      channels: applyBuiltinToolRules(model, channels, builtins, stream),
      builtinToolPath: builtins.size > 0,
    });
  });

  router.post('/v1/messages', ...chain('messages'), async (ctx: Ctx) => {
    // Absent is taken (the spec asks for nothing); present, it must be a date, an empty value included.
    const version = ctx.headers['anthropic-version'];
    if (version !== undefined && (typeof version !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(version))) {
      throw errors.invalidRequest(`anthropic-version header must be a date such as 2023-06-01, got '${version}'`, 'anthropic-version');
    }
    const body = parseRequest('messages', ctx.state.body) as Body;
    const model = resolveModel(deps, ctx, body.model);
    return runChat(deps, ctx, catalogueCall(deps, ctx, 'messages', model, body, {
      stream: body.stream === true,
      maxTokens: body.max_tokens,
      promptForEstimate: body.messages,
    }, 'messages'));
  });

  // `{model}:generateContent` / `{model}:streamGenerateContent`: the model is in the path. Served under
  // /v1beta (spec 1 section 4.3) and, identically, under /v1, where Google's SDKs also call it.
  // Under /v1 the route is a regular expression (./model-paths.ts) and the target its capture.
  const targetOf = (ctx: Ctx) => (ctx.params.target !== undefined ? String(ctx.params.target) : capturedSegment(ctx.captures));
  const modelMethod = async (ctx: Ctx, next: () => Promise<unknown>) => {
    const target = targetOf(ctx);
    const method = target.includes(':') ? target.slice(target.lastIndexOf(':') + 1) : '';
    if (method !== 'generateContent' && method !== 'streamGenerateContent') {
      throw errors.notFound(`unknown method '${method || target}': use {model}:generateContent or {model}:streamGenerateContent`);
    }
    return next();
  };
  const generateContent = async (ctx: Ctx) => {
    const target = targetOf(ctx);
    const cut = target.lastIndexOf(':');
    const method = target.slice(cut + 1);
    const stream = method === 'streamGenerateContent';
    const { alt } = stream ? validQuery(ctx, StreamQuery) : { alt: undefined };
    const body = parseRequest('generate-content', ctx.state.body) as Body;
    const model = resolveModel(deps, ctx, target.slice(0, cut).replace(/^models\//, ''));
    return runChat(deps, ctx, catalogueCall(deps, ctx, 'generate-content', model, body, {
      stream,
      jsonArrayStream: stream && alt !== 'sse',
      maxTokens: body.generationConfig?.maxOutputTokens,
      promptForEstimate: body.contents,
    }, 'contents'));
  };
  router.post('/v1beta/models/:target', modelMethod, ...chain('generate-content'), generateContent);
  router.post(MODEL_METHOD_ROUTE, MODEL_METHOD_PATH, modelMethod, ...chain('generate-content'), generateContent);

  router.post('/v1/responses', ...chain('responses'), async (ctx: Ctx) => {
    const raw = ctx.state.body as Body;
    if (raw.previous_response_id !== undefined && raw.previous_response_id !== null) {
      throw errors.invalidRequest('previous_response_id is not supported: sessions are not stored, send the whole conversation in input on each turn', 'previous_response_id');
    }
    const body = parseRequest('responses', raw) as Body;
    const model = resolveModel(deps, ctx, body.model);
    const stream = body.stream === true;
    const call = catalogueCall(deps, ctx, 'responses', model, body, { stream, maxTokens: body.max_output_tokens, promptForEstimate: body.input }, 'input');
    return runChat(deps, ctx, { ...call, channels: applyBuiltinToolRules(model, call.channels, builtinToolsOf(body.tools), stream, { streamRequired: false }) });
  });
  return router;
}
