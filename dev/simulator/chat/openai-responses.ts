// OpenAI Responses: POST /v1/responses
// https://platform.openai.com/docs/api-reference/responses and
// .../responses-streaming (every event has `type` and an increasing
// `sequence_number`, starting at 0).
import { defaultErrorBody, openaiError } from '../errors';
import { eventFrame } from '../sse';
import type { UsageOverride } from '../control';
import { pngBase64 } from '../png';
import { argumentPieces, hash32, makeId, outputBudget, outputTokens, textChars, textOf, tokensForChars, toolArguments, unixSeconds } from '../text';
import { isObject, parseObject, planCache, respondError, respondJson, respondStream, usageOf, type ChatCall, type ChatRoute, type ToolCallPlan } from './common';
import { BAD_JSON, openaiAuthError } from './openai-chat';

interface ImagePlan {
  size: string;
  quality: string;
  background: string;
  output_format: string;
  result: string;
  revised_prompt: string;
}

interface Plan {
  model: string;
  stream: boolean;
  promptTokens: number;
  tokens: string[];
  text: string;
  incomplete: boolean;
  tool: ToolCallPlan | null;
  reasoning: boolean;
  webSearchQuery: string | null;
  image: ImagePlan | null;
  visibleTokens: number;
  /** Request fields echoed in the response object. */
  echo: Record<string, unknown>;
}

type Invalid = { status: number; body: string };

const cached = planCache<Plan | Invalid>();

const invalid = (message: string, param: string | null = null, code: string | null = null): Invalid => ({
  status: 400,
  body: openaiError(message, 'invalid_request_error', param, code),
});

function plan(body: string): Plan | Invalid {
  const b = parseObject(body);
  if (!b) return invalid(BAD_JSON);
  if (typeof b.model !== 'string' || b.model === '') return invalid("Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (typeof b.previous_response_id === 'string')
    return invalid(`Previous response with id '${b.previous_response_id}' not found.`, 'previous_response_id', 'previous_response_not_found');
  let input = b.input;
  if (input === undefined) return invalid("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  if (typeof input === 'string') input = [{ role: 'user', content: input }];
  if (!Array.isArray(input)) return invalid("Invalid type for 'input': expected one of a string or array of input items, but got an object instead.", 'input', 'invalid_type');
  const stream = b.stream === true;
  const promptTokens = tokensForChars(textChars(input) + textChars(b.instructions));

  let seed = '';
  let afterToolResult = false;
  for (let i = input.length - 1; i >= 0; i--) {
    const it = input[i];
    if (!isObject(it)) continue;
    if (it.type === 'function_call_output') {
      if (i === input.length - 1) afterToolResult = true;
      seed = textOf(it.output);
      break;
    }
    if (it.role === 'user') {
      seed = textOf(it.content);
      break;
    }
  }

  const tools = Array.isArray(b.tools) ? b.tools.filter(isObject) : [];
  const functions = tools.filter((t) => t.type === 'function' && typeof t.name === 'string');
  const imageTool = tools.find((t) => t.type === 'image_generation');
  const hasWebSearch = tools.some((t) => typeof t.type === 'string' && t.type.startsWith('web_search'));
  const choice = b.tool_choice;
  const none = choice === 'none';
  const forcedName = isObject(choice) && choice.type === 'function' && typeof choice.name === 'string' ? choice.name : undefined;
  const forcedImage = isObject(choice) && choice.type === 'image_generation';

  let tool: ToolCallPlan | null = null;
  if (functions.length > 0 && !none && !forcedImage && !afterToolResult) {
    const fn = functions.find((f) => f.name === forcedName) ?? functions[0];
    const name = forcedName ?? (fn.name as string);
    const args = JSON.stringify(toolArguments(fn.parameters, seed + '\0' + name));
    tool = { name, arguments: args, pieces: argumentPieces(args) };
  }
  let image: ImagePlan | null = null;
  if (imageTool && !none && !tool) {
    image = {
      size: typeof imageTool.size === 'string' && imageTool.size !== 'auto' ? imageTool.size : '1024x1024',
      quality: typeof imageTool.quality === 'string' && imageTool.quality !== 'auto' ? imageTool.quality : 'medium',
      background: typeof imageTool.background === 'string' && imageTool.background !== 'auto' ? imageTool.background : 'opaque',
      output_format: 'png',
      result: pngBase64(hash32(seed)),
      revised_prompt: seed.slice(0, 200),
    };
  }
  const webSearchQuery = hasWebSearch && !none && !tool ? seed.split(/\s+/).slice(0, 8).join(' ') : null;

  const { count, capped } = outputBudget(b.max_output_tokens);
  const tokens = tool ? [] : outputTokens(seed, count);
  const reasoning = isObject(b.reasoning) ? b.reasoning : null;
  return {
    model: b.model,
    stream,
    promptTokens,
    tokens,
    text: tokens.join(''),
    incomplete: !tool && capped,
    tool,
    reasoning: reasoning !== null,
    webSearchQuery,
    image,
    visibleTokens: tool ? tool.pieces.length : tokens.length,
    echo: {
      instructions: b.instructions ?? null,
      max_output_tokens: b.max_output_tokens ?? null,
      parallel_tool_calls: b.parallel_tool_calls ?? true,
      // spec 1 section 4.4: reasoning{context, effort, summary}
      reasoning: { context: reasoning?.context ?? null, effort: reasoning?.effort ?? null, summary: reasoning?.summary ?? null },
      store: b.store ?? true,
      temperature: b.temperature ?? 1,
      text: b.text ?? { format: { type: 'text' }, verbosity: 'medium' },
      tool_choice: choice ?? 'auto',
      tools,
      top_p: b.top_p ?? 1,
      metadata: b.metadata ?? {},
      user: b.user ?? null,
    },
  };
}

function usage(p: Plan, o: UsageOverride | undefined) {
  const input = o?.prompt_tokens ?? p.promptTokens;
  const reasoning = o?.reasoning_tokens ?? 0;
  const output = o?.output_tokens ?? p.visibleTokens + reasoning;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: o?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + output,
  };
}

function responseObject(p: Plan, id: string, createdAt: number, status: string, output: unknown[], u: unknown) {
  const e = p.echo;
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: e.instructions,
    max_output_tokens: e.max_output_tokens,
    max_tool_calls: null,
    model: p.model,
    output,
    parallel_tool_calls: e.parallel_tool_calls,
    previous_response_id: null,
    reasoning: e.reasoning,
    service_tier: 'default',
    store: e.store,
    temperature: e.temperature,
    text: e.text,
    tool_choice: e.tool_choice,
    tools: e.tools,
    top_logprobs: 0,
    top_p: e.top_p,
    truncation: 'disabled',
    usage: u,
    user: e.user,
    metadata: e.metadata,
  };
}

interface Items {
  reasoning?: Record<string, unknown>;
  webSearch?: Record<string, unknown>;
  image?: Record<string, unknown>;
  fn?: Record<string, unknown>;
  message?: Record<string, unknown>;
}

/** The completed output items, in order: reasoning, web_search_call, image_generation_call, function_call | message. */
function completedItems(p: Plan): Items {
  const items: Items = {};
  if (p.reasoning) items.reasoning = { id: makeId('rs_', 48, true), type: 'reasoning', summary: [] };
  if (p.webSearchQuery !== null)
    items.webSearch = { id: makeId('ws_', 48, true), type: 'web_search_call', status: 'completed', action: { type: 'search', query: p.webSearchQuery } };
  if (p.image) items.image = { id: makeId('ig_', 48, true), type: 'image_generation_call', status: 'completed', ...p.image };
  if (p.tool) items.fn = { id: makeId('fc_', 48, true), type: 'function_call', status: 'completed', arguments: p.tool.arguments, call_id: makeId('call_', 24), name: p.tool.name };
  else
    items.message = {
      id: makeId('msg_', 48, true),
      type: 'message',
      status: p.incomplete ? 'incomplete' : 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: p.text }],
      role: 'assistant',
    };
  return items;
}

function outputList(items: Items): Record<string, unknown>[] {
  return [items.reasoning, items.webSearch, items.image, items.fn, items.message].filter((x): x is Record<string, unknown> => x !== undefined);
}

function handle(call: ChatCall): void {
  const authErr = openaiAuthError(call);
  if (authErr) return respondError(call, 401, authErr);
  const p = cached('r' + call.body, () => plan(call.body))!;
  if ('status' in p) return respondError(call, p.status, p.body);
  const headers = ['x-request-id', makeId('req_', 32, true)];
  const id = makeId('resp_', 48, true);
  const createdAt = unixSeconds();
  const u = usage(p, usageOf(call));
  const status = p.incomplete ? 'incomplete' : 'completed';
  const items = completedItems(p);
  const output = outputList(items);

  if (!p.stream) {
    if (call.fault?.type === 'error_frame') return respondError(call, 503, defaultErrorBody('openai', 503));
    return respondJson(call, 200, JSON.stringify(responseObject(p, id, createdAt, status, output, u)), p.visibleTokens, headers);
  }

  let seq = 0;
  const ev = (type: string, fields: Record<string, unknown>) => eventFrame(type, { type, ...fields, sequence_number: seq++ });
  const head: string[] = [];
  const tokens: string[] = [];
  const tail: string[] = [];
  const start = responseObject(p, id, createdAt, 'in_progress', [], null);
  head.push(ev('response.created', { response: start }));
  head.push(ev('response.in_progress', { response: start }));
  let index = 0;
  if (items.reasoning) {
    head.push(ev('response.output_item.added', { output_index: index, item: items.reasoning }));
    head.push(ev('response.output_item.done', { output_index: index, item: items.reasoning }));
    index++;
  }
  if (items.webSearch) {
    const item_id = items.webSearch.id;
    head.push(ev('response.output_item.added', { output_index: index, item: { id: item_id, type: 'web_search_call', status: 'in_progress' } }));
    head.push(ev('response.web_search_call.in_progress', { output_index: index, item_id }));
    head.push(ev('response.web_search_call.searching', { output_index: index, item_id }));
    head.push(ev('response.web_search_call.completed', { output_index: index, item_id }));
    head.push(ev('response.output_item.done', { output_index: index, item: items.webSearch }));
    index++;
  }
  if (items.image) {
    const item_id = items.image.id;
    head.push(ev('response.output_item.added', { output_index: index, item: { id: item_id, type: 'image_generation_call', status: 'in_progress' } }));
    head.push(ev('response.image_generation_call.in_progress', { output_index: index, item_id }));
    head.push(ev('response.image_generation_call.generating', { output_index: index, item_id }));
    head.push(ev('response.image_generation_call.completed', { output_index: index, item_id }));
    head.push(ev('response.output_item.done', { output_index: index, item: items.image }));
    index++;
  }
  if (items.fn && p.tool) {
    const item_id = items.fn.id;
    head.push(ev('response.output_item.added', { output_index: index, item: { ...items.fn, status: 'in_progress', arguments: '' } }));
    for (const delta of p.tool.pieces) tokens.push(ev('response.function_call_arguments.delta', { item_id, output_index: index, delta }));
    tail.push(ev('response.function_call_arguments.done', { item_id, output_index: index, name: p.tool.name, arguments: p.tool.arguments }));
    tail.push(ev('response.output_item.done', { output_index: index, item: items.fn }));
  } else if (items.message) {
    const item_id = items.message.id;
    const part = (text: string) => ({ type: 'output_text', annotations: [], logprobs: [], text });
    head.push(ev('response.output_item.added', { output_index: index, item: { id: item_id, type: 'message', status: 'in_progress', content: [], role: 'assistant' } }));
    head.push(ev('response.content_part.added', { item_id, output_index: index, content_index: 0, part: part('') }));
    const idJson = JSON.stringify(item_id);
    for (const t of p.tokens) {
      tokens.push(
        'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":' + idJson + ',"output_index":' + index +
          ',"content_index":0,"delta":' + JSON.stringify(t) + ',"logprobs":[],"sequence_number":' + seq++ + '}\n\n',
      );
    }
    tail.push(ev('response.output_text.done', { item_id, output_index: index, content_index: 0, text: p.text, logprobs: [] }));
    tail.push(ev('response.content_part.done', { item_id, output_index: index, content_index: 0, part: part(p.text) }));
    tail.push(ev('response.output_item.done', { output_index: index, item: items.message }));
  }
  const final = responseObject(p, id, createdAt, status, output, u);
  tail.push(ev(p.incomplete ? 'response.incomplete' : 'response.completed', { response: final }));

  const total = head.length + tokens.length + tail.length;
  const errSeq = call.fault ? Math.min(total, call.fault.after_chunks) : seq;
  const errorFrame = eventFrame('error', {
    type: 'error',
    code: 'server_error',
    message: 'The server had an error while processing your request. Sorry about that!',
    param: null,
    sequence_number: errSeq,
  });
  respondStream(call, { head, tokens, tail }, { errorFrame, headers });
}

export const openaiResponsesRoute: ChatRoute = { dialect: 'openai', handle };
