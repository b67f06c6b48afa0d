// Google Gemini API: POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent (`?alt=sse` gives `data: {...}\r\n\r\n` frames as
// Google sends them; without it a JSON array is streamed).
// https://ai.google.dev/api/generate-content
import { defaultErrorBody, geminiError } from '../errors';
import type { UsageOverride } from '../control';
import { makeId, outputBudget, outputTokens, textChars, textOf, tokensForChars, toolArguments } from '../text';
import { header, isObject, parseObject, planCache, respondError, respondJson, respondStream, usageOf, type ChatCall, type ChatRoute } from './common';

interface Plan {
  model: string;
  promptTokens: number;
  tokens: string[];
  text: string;
  finishReason: 'STOP' | 'MAX_TOKENS';
  call: { name: string; args: Record<string, unknown> } | null;
  visibleTokens: number;
}

type Invalid = { status: number; body: string };

const NO_KEY =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";

const SSE_END = '\r\n\r\n';
export const GEMINI_ERROR_JSON = geminiError(503, 'The model is overloaded. Please try again later.', 'UNAVAILABLE');

const cached = planCache<Plan | Invalid>();

const invalid = (message: string): Invalid => ({ status: 400, body: geminiError(400, message, 'INVALID_ARGUMENT') });

/** Both spellings are accepted on the wire (proto JSON): camelCase and snake_case. */
function pick(o: Record<string, unknown>, camel: string, snake: string): unknown {
  return o[camel] !== undefined ? o[camel] : o[snake];
}

function plan(model: string, body: string): Plan | Invalid {
  const b = parseObject(body);
  if (!b) return invalid('Invalid JSON payload received. Unexpected token.');
  const contents = b.contents;
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0)) return invalid('* GenerateContentRequest.contents: contents is not specified\n');
  if (!Array.isArray(contents)) return invalid('Invalid JSON payload received. Unknown name "contents": Proto field is not repeating, cannot start list.');
  const system = pick(b, 'systemInstruction', 'system_instruction');
  const promptTokens = tokensForChars(textChars(contents) + textChars(system));

  let seed = '';
  let afterToolResult = false;
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (!isObject(c) || (c.role !== undefined && c.role !== 'user')) continue;
    const parts = Array.isArray(c.parts) ? c.parts : [];
    seed = textOf(parts);
    if (i === contents.length - 1) afterToolResult = parts.some((x) => isObject(x) && pick(x, 'functionResponse', 'function_response') !== undefined);
    break;
  }

  const decls: Record<string, unknown>[] = [];
  if (Array.isArray(b.tools)) {
    for (const t of b.tools) {
      if (!isObject(t)) continue;
      const fd = pick(t, 'functionDeclarations', 'function_declarations');
      if (Array.isArray(fd)) for (const d of fd) if (isObject(d) && typeof d.name === 'string') decls.push(d);
    }
  }
  const toolConfig = pick(b, 'toolConfig', 'tool_config');
  const fcc = isObject(toolConfig) ? pick(toolConfig, 'functionCallingConfig', 'function_calling_config') : undefined;
  const mode = isObject(fcc) && typeof fcc.mode === 'string' ? fcc.mode.toUpperCase() : 'AUTO';
  const allowed = isObject(fcc) ? pick(fcc, 'allowedFunctionNames', 'allowed_function_names') : undefined;
  let call: Plan['call'] = null;
  if (decls.length > 0 && mode !== 'NONE' && !afterToolResult) {
    const forced = Array.isArray(allowed) && typeof allowed[0] === 'string' ? allowed[0] : undefined;
    const d = decls.find((x) => x.name === forced) ?? decls[0];
    const schema = d.parameters ?? pick(d, 'parametersJsonSchema', 'parameters_json_schema');
    call = { name: d.name as string, args: toolArguments(schema, seed + '\0' + (d.name as string)) };
  }

  const gc = pick(b, 'generationConfig', 'generation_config');
  const cap = isObject(gc) ? pick(gc, 'maxOutputTokens', 'max_output_tokens') : undefined;
  const { count, capped } = outputBudget(cap);
  const tokens = call ? [] : outputTokens(seed, count);
  return {
    model,
    promptTokens,
    tokens,
    text: tokens.join(''),
    finishReason: capped && !call ? 'MAX_TOKENS' : 'STOP',
    call,
    visibleTokens: call ? Math.max(1, Math.ceil(JSON.stringify(call.args).length / 4)) : tokens.length,
  };
}

function usageMetadata(p: Plan, o: UsageOverride | undefined) {
  const prompt = o?.prompt_tokens ?? p.promptTokens;
  const candidates = o?.output_tokens ?? p.visibleTokens;
  const thoughts = o?.reasoning_tokens ?? 0;
  const cachedTokens = o?.cached_tokens ?? 0;
  // Zero-valued fields are omitted, as Google's JSON does.
  const u: Record<string, unknown> = { promptTokenCount: prompt, candidatesTokenCount: candidates, totalTokenCount: prompt + candidates + thoughts };
  if (cachedTokens > 0) u.cachedContentTokenCount = cachedTokens;
  u.promptTokensDetails = [{ modality: 'TEXT', tokenCount: prompt }];
  if (cachedTokens > 0) u.cacheTokensDetails = [{ modality: 'TEXT', tokenCount: cachedTokens }];
  if (thoughts > 0) u.thoughtsTokenCount = thoughts;
  return u;
}

function handle(call: ChatCall): void {
  const key = header(call, 'x-goog-api-key') || (call.search.includes('key=') ? new URLSearchParams(call.search).get('key') : null);
  if (!key) return respondError(call, 403, geminiError(403, NO_KEY, 'PERMISSION_DENIED'));
  const model = call.params.model ?? '';
  const p = cached('g' + model + '\0' + call.body, () => plan(model, call.body))!;
  if ('status' in p) return respondError(call, p.status, p.body);
  const o = usageOf(call);
  const responseId = makeId('', 23);
  const stream = call.params.method === 'streamGenerateContent';

  if (!stream) {
    if (call.fault?.type === 'error_frame') return respondError(call, 503, defaultErrorBody('gemini', 503));
    const parts = p.call ? [{ functionCall: p.call }] : [{ text: p.text }];
    const body = JSON.stringify({
      candidates: [{ content: { parts, role: 'model' }, finishReason: p.finishReason, index: 0 }],
      usageMetadata: usageMetadata(p, o),
      modelVersion: p.model,
      responseId,
    });
    return respondJson(call, 200, body, p.visibleTokens);
  }

  // One GenerateContentResponse per token; the last one carries finishReason and usageMetadata.
  const modelJson = JSON.stringify(p.model);
  const tail = ',"modelVersion":' + modelJson + ',"responseId":"' + responseId + '"}';
  const partsJson: string[] = p.call ? [JSON.stringify({ functionCall: p.call })] : p.tokens.length ? p.tokens.map((t) => '{"text":' + JSON.stringify(t) + '}') : ['{"text":""}'];
  const last = partsJson.length - 1;
  const finalExtra = ',"finishReason":"' + p.finishReason + '"';
  const usageJson = ',"usageMetadata":' + JSON.stringify(usageMetadata(p, o));
  const json = partsJson.map(
    (part, i) => '{"candidates":[{"content":{"parts":[' + part + '],"role":"model"}' + (i === last ? finalExtra : '') + ',"index":0}]' + (i === last ? usageJson : '') + tail,
  );
  const sse = /[?&]alt=sse(?:&|$)/.test(call.search);
  if (sse) {
    const tokens = json.map((j) => 'data: ' + j + SSE_END);
    return respondStream(call, { head: [], tokens, tail: [] }, { errorFrame: 'data: ' + GEMINI_ERROR_JSON + SSE_END });
  }
  respondStream(call, { head: [], tokens: json, tail: [] }, {
    errorFrame: ',\r\n' + GEMINI_ERROR_JSON + '\n]',
    contentType: 'application/json; charset=UTF-8',
    open: '[',
    separator: ',\r\n',
    close: '\n]',
  });
}

export const geminiRoute: ChatRoute = { dialect: 'gemini', handle };

const GEMINI_PATH = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** `{model, method}` for a generate-content path, else null. */
export function matchGeminiPath(path: string): { model: string; method: string } | null {
  const m = GEMINI_PATH.exec(path);
  if (!m) return null;
  let model = m[1];
  try {
    model = decodeURIComponent(model);
  } catch {
    /* keep raw */
  }
  return { model, method: m[2] };
}
