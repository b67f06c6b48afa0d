// OpenAI Chat Completions: POST /v1/chat/completions
// https://platform.openai.com/docs/api-reference/chat (object `chat.completion`,
// stream of `chat.completion.chunk`, `data: [DONE]`), plus xAI's
// `usage.num_server_side_tools_used`.
import { defaultErrorBody, openaiError } from '../errors';
import { DONE_FRAME } from '../sse';
import type { UsageOverride } from '../control';
import { argumentPieces, makeId, outputBudget, outputTokens, textChars, textOf, tokensForChars, toolArguments, unixSeconds } from '../text';
import { header, isObject, parseObject, planCache, respondError, respondJson, respondStream, usageOf, type ChatCall, type ChatRoute, type ToolCallPlan } from './common';

interface Plan {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  promptTokens: number;
  tokens: string[];
  text: string;
  finish: 'stop' | 'length' | 'tool_calls';
  tool: ToolCallPlan | null;
  builtinTools: number;
  visibleTokens: number;
  /** Memo: the non-streaming body after `"created":N` for text answers without usage overrides. */
  textTail?: string;
}

type Invalid = { status: number; body: string };

const FINGERPRINT = 'fp_5a1d0c0de1';

const NO_KEY =
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username. You can obtain an API key from https://platform.openai.com/account/api-keys.";

export const BAD_JSON =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP client correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)";

/** Bearer auth as OpenAI checks it: a missing header is 401 with code null. */
export function openaiAuthError(call: ChatCall): string | null {
  const auth = header(call, 'authorization');
  if (!auth || !/^Bearer\s+\S/i.test(auth)) return openaiError(NO_KEY, 'invalid_request_error', null, null);
  return null;
}

export const OPENAI_ERROR_FRAME =
  'data: ' + openaiError('The server had an error while processing your request. Sorry about that!', 'server_error') + '\n\n';

const cached = planCache<Plan | Invalid>();

function plan(body: string): Plan | Invalid {
  const b = parseObject(body);
  if (!b) return { status: 400, body: openaiError(BAD_JSON, 'invalid_request_error') };
  if (typeof b.model !== 'string' || b.model === '') return { status: 400, body: openaiError('you must provide a model parameter', 'invalid_request_error') };
  const messages = b.messages;
  if (messages === undefined) return { status: 400, body: openaiError("Missing required parameter: 'messages'.", 'invalid_request_error', 'messages', 'missing_required_parameter') };
  if (!Array.isArray(messages)) return { status: 400, body: openaiError("Invalid type for 'messages': expected an array, but got an object instead.", 'invalid_request_error', 'messages', 'invalid_type') };
  if (messages.length === 0)
    return { status: 400, body: openaiError("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'invalid_request_error', 'messages', 'empty_array') };
  const stream = b.stream === true;
  if (b.stream_options != null && !stream)
    return { status: 400, body: openaiError("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'invalid_request_error', 'stream_options') };

  const promptTokens = tokensForChars(textChars(messages));
  let lastRole = '';
  let seed = '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isObject(m)) continue;
    if (lastRole === '') lastRole = String(m.role ?? '');
    if (m.role === 'user' || m.role === 'tool') {
      seed = textOf(m.content);
      break;
    }
  }

  const tools = Array.isArray(b.tools) ? b.tools.filter(isObject) : [];
  const functions = tools.filter((t) => t.type === 'function' && isObject(t.function) && typeof t.function.name === 'string').map((t) => t.function as Record<string, unknown>);
  const builtinTools = tools.length - functions.length;
  let tool: ToolCallPlan | null = null;
  const choice = b.tool_choice;
  if (functions.length > 0 && choice !== 'none' && lastRole !== 'tool') {
    const forced = isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string' ? choice.function.name : undefined;
    const fn = functions.find((f) => f.name === forced) ?? functions[0];
    const name = forced ?? (fn.name as string);
    const args = JSON.stringify(toolArguments(fn.parameters, seed + '\0' + name));
    tool = { name, arguments: args, pieces: argumentPieces(args) };
  }

  const { count, capped } = outputBudget(b.max_completion_tokens ?? b.max_tokens);
  const tokens = tool ? [] : outputTokens(seed, count);
  const includeUsage = stream && isObject(b.stream_options) && b.stream_options.include_usage === true;
  return {
    model: b.model,
    stream,
    includeUsage,
    promptTokens,
    tokens,
    text: tokens.join(''),
    finish: tool ? 'tool_calls' : capped ? 'length' : 'stop',
    tool,
    builtinTools,
    visibleTokens: tool ? tool.pieces.length : tokens.length,
  };
}

function usage(p: Plan, o: UsageOverride | undefined) {
  const prompt = o?.prompt_tokens ?? p.promptTokens;
  const reasoning = o?.reasoning_tokens ?? 0;
  const completion = o?.output_tokens ?? p.visibleTokens + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: o?.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    num_server_side_tools_used: o?.server_tool_calls ?? p.builtinTools,
  };
}

function handle(call: ChatCall): void {
  const authErr = openaiAuthError(call);
  if (authErr) return respondError(call, 401, authErr);
  const p = cached('c' + call.body, () => plan(call.body))!;
  if ('status' in p) return respondError(call, p.status, p.body);
  const headers = ['x-request-id', makeId('req_', 32, true)];
  const id = makeId('chatcmpl-', 29);
  const created = unixSeconds();
  const o = usageOf(call);
  const u = usage(p, o);

  if (!p.stream) {
    if (call.fault?.type === 'error_frame') return respondError(call, 503, defaultErrorBody('openai', 503));
    if (!p.tool && !o) {
      // Hot path (benchmarks): everything after `created` is the same for every answer to this body.
      p.textTail ??= JSON.stringify({
        model: p.model,
        choices: [{ index: 0, message: { role: 'assistant', content: p.text, refusal: null, annotations: [] }, logprobs: null, finish_reason: p.finish }],
        usage: u,
        service_tier: 'default',
        system_fingerprint: FINGERPRINT,
      }).slice(1);
      return respondJson(call, 200, '{"id":"' + id + '","object":"chat.completion","created":' + created + ',' + p.textTail, p.visibleTokens, headers);
    }
    const message: Record<string, unknown> = { role: 'assistant', content: p.tool ? null : p.text, refusal: null, annotations: [] };
    if (p.tool) message.tool_calls = [{ id: makeId('call_', 24), type: 'function', function: { name: p.tool.name, arguments: p.tool.arguments } }];
    const body = JSON.stringify({
      id,
      object: 'chat.completion',
      created,
      model: p.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: p.finish }],
      usage: u,
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
    });
    return respondJson(call, 200, body, p.visibleTokens, headers);
  }

  // Chunks share id/created/model; only `choices` (and the trailing usage) differ.
  const pre = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(p.model)},"service_tier":"default","system_fingerprint":"${FINGERPRINT}","choices":[`;
  const post = p.includeUsage ? '],"usage":null}\n\n' : ']}\n\n';
  const choice = (delta: string, finish: string | null) =>
    pre + '{"index":0,"delta":' + delta + ',"logprobs":null,"finish_reason":' + (finish ? '"' + finish + '"' : 'null') + '}' + post;

  const head: string[] = [];
  const tokens: string[] = [];
  if (p.tool) {
    const first = { role: 'assistant', content: null, tool_calls: [{ index: 0, id: makeId('call_', 24), type: 'function', function: { name: p.tool.name, arguments: '' } }], refusal: null };
    head.push(choice(JSON.stringify(first), null));
    for (const piece of p.tool.pieces) tokens.push(choice('{"tool_calls":[{"index":0,"function":{"arguments":' + JSON.stringify(piece) + '}}]}', null));
  } else {
    head.push(choice('{"role":"assistant","content":"","refusal":null}', null));
    for (const t of p.tokens) tokens.push(choice('{"content":' + JSON.stringify(t) + '}', null));
  }
  const tail = [choice('{}', p.finish)];
  if (p.includeUsage) tail.push(pre + '],"usage":' + JSON.stringify(u) + '}\n\n');
  tail.push(DONE_FRAME);
  respondStream(call, { head, tokens, tail }, { errorFrame: OPENAI_ERROR_FRAME, headers });
}

export const openaiChatRoute: ChatRoute = { dialect: 'openai', handle };
