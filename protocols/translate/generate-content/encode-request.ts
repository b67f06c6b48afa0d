import type {
  AssistantBlock,
  CanonicalField,
  CanonicalRequest,
  Encoded,
  MediaSource,
  ToolResultBlock,
  UserBlock,
} from '../../canonical/request';
import { parseObject } from '../json-args';
import { guessMediaType } from '../media';
import { toGeminiSchema } from './schema-subset';

/**
 * canonical request -> generate-content request body. The model and the
 * streaming choice travel in the URL (`models/{m}:streamGenerateContent`),
 * so neither is in the body.
 */
export function encodeGenerateContentRequest(req: CanonicalRequest): Encoded {
  const dropped: CanonicalField[] = [];
  const body: Record<string, unknown> = {};
  body.contents = req.messages
    .map((m) =>
      m.role === 'user'
        ? { role: 'user', parts: userParts(m.content, dropped) }
        : { role: 'model', parts: modelParts(m.content) },
    )
    .filter((c) => c.parts.length > 0);
  if (req.system.length > 0) body.systemInstruction = { parts: req.system.map((text) => ({ text })) };

  const declarations: unknown[] = [];
  const tools: unknown[] = [];
  for (const t of req.tools) {
    if (t.type === 'function') {
      declarations.push({
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        ...(hasProperties(t.parameters) ? { parameters: toGeminiSchema(t.parameters) } : {}),
      });
    } else if (t.type === 'web_search') tools.push({ googleSearch: {} });
    else dropped.push(`tools.${t.type}`);
  }
  if (declarations.length > 0) tools.unshift({ functionDeclarations: declarations });
  if (tools.length > 0) body.tools = tools;
  const choice = req.toolChoice;
  if (choice && declarations.length > 0) {
    const mode = { auto: 'AUTO', none: 'NONE', required: 'ANY', tool: 'ANY' }[choice.type];
    body.toolConfig = {
      functionCallingConfig: { mode, ...(choice.type === 'tool' ? { allowedFunctionNames: [choice.name] } : {}) },
    };
  }
  if (req.parallelToolCalls === false) dropped.push('parallelToolCalls');
  if (req.user !== undefined) dropped.push('user');

  const config: Record<string, unknown> = {};
  if (req.maxTokens !== undefined) config.maxOutputTokens = req.maxTokens;
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.topP !== undefined) config.topP = req.topP;
  if (req.topK !== undefined) config.topK = req.topK;
  if (req.stop?.length) config.stopSequences = req.stop;
  if (req.n !== undefined) config.candidateCount = req.n;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.presencePenalty !== undefined) config.presencePenalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) config.frequencyPenalty = req.frequencyPenalty;
  const format = req.responseFormat;
  if (format) {
    config.responseMimeType = 'application/json';
    if (format.type === 'json_schema') config.responseSchema = toGeminiSchema(format.schema);
  }
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return { body, dropped: [...new Set(dropped)] };
}

function userParts(blocks: UserBlock[], dropped: CanonicalField[]): unknown[] {
  const responses: unknown[] = [];
  const rest: unknown[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        if (b.text !== '') rest.push({ text: b.text });
        break;
      case 'image':
      case 'file':
        rest.push(mediaPart(b.source, b.type === 'image' ? 'image/jpeg' : 'application/pdf'));
        break;
      case 'tool_result':
        responses.push({ functionResponse: { name: b.name, response: functionResponse(b, dropped) } });
        break;
    }
  }
  return [...responses, ...rest];
}

function modelParts(blocks: AssistantBlock[]): unknown[] {
  return blocks
    .filter((b) => b.type !== 'text' || b.text !== '')
    .map((b) => (b.type === 'text' ? { text: b.text } : { functionCall: { name: b.name, args: b.input } }));
}

function mediaPart(source: MediaSource, fallbackType: string): unknown {
  if (source.kind === 'base64') return { inlineData: { mimeType: source.mediaType, data: source.data } };
  return { fileData: { mimeType: source.mediaType ?? guessMediaType(source.url, fallbackType), fileUri: source.url } };
}

/**
 * The `response` object: a JSON-object result is passed as is; other text
 * goes under `output` (or `error` for a failed call), the keys Gemini documents.
 */
function functionResponse(b: ToolResultBlock, dropped: CanonicalField[]): Record<string, unknown> {
  if (b.content.some((c) => c.type === 'image')) dropped.push('toolResult.image');
  const text = b.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  if (b.isError) return { error: text };
  return parseObject(text) ?? { output: text };
}

function hasProperties(schema: Record<string, unknown>): boolean {
  const props = schema.properties;
  return props !== null && typeof props === 'object' && Object.keys(props).length > 0;
}
