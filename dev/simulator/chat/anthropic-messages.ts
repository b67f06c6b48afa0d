// Anthropic Messages: POST /v1/messages
// https://docs.anthropic.com/en/api/messages and .../messages-streaming
// (message_start, content_block_start, ping, content_block_delta,
// content_block_stop, message_delta, message_stop).
import { anthropicError, defaultErrorBody } from '../errors';
import { eventFrame } from '../sse';
import type { UsageOverride } from '../control';
import { argumentPieces, makeId, outputBudget, outputTokens, textChars, textOf, tokensForChars, toolArguments } from '../text';
import { header, isObject, parseObject, planCache, respondError, respondJson, respondStream, usageOf, type ChatCall, type ChatRoute, type ToolCallPlan } from './common';

interface Plan {
  model: string;
  stream: boolean;
  promptTokens: number;
  tokens: string[];
  text: string;
  stopReason: 'end_turn' | 'max_tokens' | 'tool_use';
  tool: (ToolCallPlan & { input: Record<string, unknown> }) | null;
  webSearchTools: number;
  visibleTokens: number;
  /** Sampling parameters present in the request (rejected from API version 2026-10-21). */
  sampling: string[];
}

type Invalid = { status: number; body: string };

export const ANTHROPIC_ERROR_FRAME = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';

const cached = planCache<Plan | Invalid>();

/**
 * API version 2026-10-21 (sent by @anthropic-ai/sdk 1.x) removed the sampling
 * parameters: any of them, at any value, is a 400. 2023-06-01 accepts them.
 */
export const SAMPLING_REMOVED_IN = '2026-10-21';
const SAMPLING_PARAMS = ['temperature', 'top_p', 'top_k'] as const;

const invalid = (message: string): Invalid => ({ status: 400, body: anthropicError('invalid_request_error', message) });

function plan(body: string): Plan | Invalid {
  const b = parseObject(body);
  if (!b) return invalid('There was an issue with the request body: the body is not valid JSON.');
  if (typeof b.model !== 'string' || b.model === '') return invalid('model: Field required');
  if (b.max_tokens === undefined) return invalid('max_tokens: Field required');
  if (typeof b.max_tokens !== 'number' || !Number.isInteger(b.max_tokens) || b.max_tokens < 1) return invalid('max_tokens: Input should be a valid integer greater than or equal to 1');
  const messages = b.messages;
  if (messages === undefined) return invalid('messages: Field required');
  if (!Array.isArray(messages)) return invalid('messages: Input should be a valid list');
  if (messages.length === 0) return invalid('messages: at least one message is required');
  for (const m of messages) {
    if (!isObject(m) || (m.role !== 'user' && m.role !== 'assistant')) return invalid("messages: roles must be 'user' or 'assistant'");
  }
  const stream = b.stream === true;
  const promptTokens = tokensForChars(textChars(messages) + textChars(b.system));

  let seed = '';
  let afterToolResult = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Record<string, unknown>;
    if (m.role !== 'user') continue;
    seed = textOf(m.content);
    if (i === messages.length - 1 && Array.isArray(m.content)) afterToolResult = m.content.some((c) => isObject(c) && c.type === 'tool_result');
    break;
  }

  const tools = Array.isArray(b.tools) ? b.tools.filter(isObject) : [];
  const custom = tools.filter((t) => (t.type === undefined || t.type === 'custom') && typeof t.name === 'string');
  const webSearchTools = tools.filter((t) => typeof t.type === 'string' && t.type.startsWith('web_search')).length;
  const choice = isObject(b.tool_choice) ? b.tool_choice : undefined;
  let tool: Plan['tool'] = null;
  if (custom.length > 0 && choice?.type !== 'none' && !afterToolResult) {
    const forced = choice?.type === 'tool' && typeof choice.name === 'string' ? choice.name : undefined;
    const t = custom.find((c) => c.name === forced) ?? custom[0];
    const name = forced ?? (t.name as string);
    const input = toolArguments(t.input_schema, seed + '\0' + name);
    const args = JSON.stringify(input);
    tool = { name, input, arguments: args, pieces: argumentPieces(args) };
  }

  const { count, capped } = outputBudget(b.max_tokens);
  const tokens = tool ? [] : outputTokens(seed, count);
  return {
    model: b.model,
    stream,
    promptTokens,
    tokens,
    text: tokens.join(''),
    stopReason: tool ? 'tool_use' : capped ? 'max_tokens' : 'end_turn',
    tool,
    webSearchTools,
    visibleTokens: tool ? tool.pieces.length : tokens.length,
    sampling: SAMPLING_PARAMS.filter((k) => b[k] !== undefined),
  };
}

function usage(p: Plan, o: UsageOverride | undefined, output: number | null) {
  const creation = o?.cache_creation_input_tokens ?? 0;
  const u: Record<string, unknown> = {
    input_tokens: o?.prompt_tokens ?? p.promptTokens,
    cache_creation_input_tokens: creation,
    cache_read_input_tokens: o?.cache_read_input_tokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: creation, ephemeral_1h_input_tokens: 0 },
    output_tokens: output ?? outputCount(p, o),
    service_tier: 'standard',
  };
  const server = o?.server_tool_calls ?? p.webSearchTools;
  if (server > 0) u.server_tool_use = { web_search_requests: server };
  return u;
}

function outputCount(p: Plan, o: UsageOverride | undefined): number {
  return o?.output_tokens ?? p.visibleTokens + (o?.reasoning_tokens ?? 0);
}

function handle(call: ChatCall): void {
  // The API key comes in x-api-key (curl, SDK 0.x) or as a Bearer token (SDK 1.x sends `Authorization: Bearer <key>`).
  if (!header(call, 'x-api-key') && !/^Bearer\s+\S/i.test(header(call, 'authorization') ?? ''))
    return respondError(call, 401, anthropicError('authentication_error', 'x-api-key header is required'));
  const version = header(call, 'anthropic-version');
  if (!version) return respondError(call, 400, anthropicError('invalid_request_error', 'anthropic-version: header is required'));
  const p = cached('a' + call.body, () => plan(call.body))!;
  if ('status' in p) return respondError(call, p.status, p.body);
  if (p.sampling.length > 0 && version >= SAMPLING_REMOVED_IN)
    return respondError(call, 400, anthropicError('invalid_request_error', `${p.sampling[0]}: Extra inputs are not permitted in API version ${version}`));
  const o = usageOf(call);
  const headers = ['request-id', makeId('req_011', 22)];
  const id = makeId('msg_01', 22);

  if (!p.stream) {
    if (call.fault?.type === 'error_frame') return respondError(call, 529, defaultErrorBody('anthropic', 529));
    const content = p.tool ? [{ type: 'tool_use', id: makeId('toolu_01', 22), name: p.tool.name, input: p.tool.input }] : [{ type: 'text', text: p.text }];
    const body = JSON.stringify({
      id,
      type: 'message',
      role: 'assistant',
      model: p.model,
      content,
      stop_reason: p.stopReason,
      stop_sequence: null,
      usage: usage(p, o, null),
    });
    return respondJson(call, 200, body, p.visibleTokens, headers);
  }

  const start = {
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model: p.model, content: [], stop_reason: null, stop_sequence: null, usage: usage(p, o, 1) },
  };
  const block = p.tool ? { type: 'tool_use', id: makeId('toolu_01', 22), name: p.tool.name, input: {} } : { type: 'text', text: '' };
  const head = [
    eventFrame('message_start', start),
    eventFrame('content_block_start', { type: 'content_block_start', index: 0, content_block: block }),
    'event: ping\ndata: {"type": "ping"}\n\n',
  ];
  const tokens: string[] = [];
  if (p.tool) {
    for (const piece of p.tool.pieces)
      tokens.push('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":' + JSON.stringify(piece) + '}}\n\n');
  } else {
    for (const t of p.tokens) tokens.push('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":' + JSON.stringify(t) + '}}\n\n');
  }
  const deltaUsage: Record<string, unknown> = { output_tokens: outputCount(p, o) };
  const server = o?.server_tool_calls ?? p.webSearchTools;
  if (server > 0) deltaUsage.server_tool_use = { web_search_requests: server };
  const tail = [
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
    eventFrame('message_delta', { type: 'message_delta', delta: { stop_reason: p.stopReason, stop_sequence: null }, usage: deltaUsage }),
    'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  ];
  respondStream(call, { head, tokens, tail }, { errorFrame: ANTHROPIC_ERROR_FRAME, headers });
}

export const anthropicMessagesRoute: ChatRoute = { dialect: 'anthropic', handle };
