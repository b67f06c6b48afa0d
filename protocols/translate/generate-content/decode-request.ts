import type {
  AssistantBlock,
  CanonicalRequest,
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolChoice,
  Decoded,
  MediaSource,
  UserBlock,
} from '../../canonical/request';
import type { GeminiPart, GenerateContentRequest } from '../../generate-content/schema';
import { Conversation } from '../conversation';
import { newId } from '../ids';
import { fromGeminiSchema } from './json-schema';

export interface GeminiDecodeOptions {
  /** From the path: /v1beta/models/{model}:generateContent. */
  model?: string;
  /** True for :streamGenerateContent. */
  stream?: boolean;
}

const NO_SLOT_CONFIG = ['thinkingConfig', 'responseModalities', 'responseLogprobs', 'logprobs', 'speechConfig', 'mediaResolution'];

/**
 * generate-content request -> canonical request. Gemini pairs function
 * calls and responses by name (and optional id); canonical tool calls need
 * ids, so calls without one get a fresh id and each functionResponse takes
 * the oldest open call of the same name.
 */
export function decodeGenerateContentRequest(body: GenerateContentRequest, opts: GeminiDecodeOptions = {}): Decoded {
  const dropped = new Set<string>();
  if (body.safetySettings !== undefined) dropped.add('safetySettings');
  if (body.cachedContent !== undefined) dropped.add('cachedContent');
  const open = new Map<string, string[]>();
  const talk = new Conversation();

  for (const content of body.contents) {
    const user: UserBlock[] = [];
    const model: AssistantBlock[] = [];
    for (const p of content.parts) {
      if (p.thought) {
        dropped.add('contents.parts.thought');
        continue;
      }
      if (p.thoughtSignature !== undefined) dropped.add('contents.parts.thoughtSignature');
      if (p.text !== undefined) (content.role === 'model' ? model : user).push({ type: 'text', text: p.text });
      else if (p.inlineData) user.push(mediaBlock({ kind: 'base64', mediaType: p.inlineData.mimeType, data: p.inlineData.data }));
      else if (p.fileData) {
        const { fileUri, mimeType } = p.fileData;
        user.push(mediaBlock({ kind: 'url', url: fileUri, ...(mimeType ? { mediaType: mimeType } : {}) }));
      } else if (p.functionCall) {
        const id = p.functionCall.id ?? newId('call_');
        const queue = open.get(p.functionCall.name) ?? [];
        queue.push(id);
        open.set(p.functionCall.name, queue);
        model.push({ type: 'tool_call', id, name: p.functionCall.name, input: p.functionCall.args ?? {} });
      } else if (p.functionResponse) {
        const { name, response } = p.functionResponse;
        const queue = open.get(name) ?? [];
        const id = p.functionResponse.id ?? queue.shift() ?? newId('call_');
        const i = queue.indexOf(id);
        if (i !== -1) queue.splice(i, 1);
        user.push({ type: 'tool_result', toolCallId: id, name, content: [{ type: 'text', text: responseText(response) }], ...(isError(response) ? { isError: true } : {}) });
      } else dropped.add(`contents.parts.${partKind(p)}`);
    }
    if (content.role === 'model') talk.assistant(model);
    else talk.user(user);
  }

  const system = (body.systemInstruction?.parts ?? []).flatMap((p) => (p.text !== undefined ? [p.text] : []));
  const tools: CanonicalTool[] = [];
  for (const t of body.tools ?? []) {
    for (const key of Object.keys(t)) {
      if (key === 'functionDeclarations') {
        for (const d of t.functionDeclarations ?? []) {
          const parameters = d.parametersJsonSchema ?? (d.parameters ? fromGeminiSchema(d.parameters) : undefined);
          tools.push({
            type: 'function',
            name: d.name,
            ...(d.description ? { description: d.description } : {}),
            parameters: (parameters as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
          });
        }
      } else if (key === 'googleSearch' || key === 'googleSearchRetrieval') tools.push({ type: 'web_search' });
      else dropped.add(`tools.${key}`);
    }
  }

  const g = body.generationConfig ?? {};
  for (const key of NO_SLOT_CONFIG) if (g[key] !== undefined) dropped.add(`generationConfig.${key}`);
  const request: CanonicalRequest = {
    model: opts.model,
    system,
    messages: talk.messages,
    tools,
    toolChoice: toolChoice(body.toolConfig?.functionCallingConfig),
    maxTokens: g.maxOutputTokens,
    temperature: g.temperature,
    topP: g.topP,
    topK: g.topK,
    stop: g.stopSequences,
    stream: opts.stream,
    n: g.candidateCount !== undefined && g.candidateCount > 1 ? g.candidateCount : undefined,
    seed: g.seed,
    frequencyPenalty: g.frequencyPenalty,
    presencePenalty: g.presencePenalty,
    responseFormat: responseFormat(g),
  };
  return { request, dropped: [...dropped] };
}

function mediaBlock(source: MediaSource): UserBlock {
  const type = source.kind === 'base64' ? source.mediaType : (source.mediaType ?? '');
  return type.startsWith('image/') ? { type: 'image', source } : { type: 'file', source };
}

/** The `output` text when that is all the response holds, else the response as JSON. */
function responseText(response: Record<string, unknown>): string {
  const keys = Object.keys(response);
  if (keys.length === 1 && typeof response[keys[0]] === 'string' && (keys[0] === 'output' || keys[0] === 'error')) {
    return response[keys[0]] as string;
  }
  return JSON.stringify(response);
}

function isError(response: Record<string, unknown>): boolean {
  return response.error !== undefined && response.output === undefined;
}

function partKind(p: GeminiPart): string {
  return Object.keys(p).find((k) => k !== 'thoughtSignature') ?? 'empty';
}

function toolChoice(c: NonNullable<GenerateContentRequest['toolConfig']>['functionCallingConfig']): CanonicalToolChoice | undefined {
  switch (c?.mode) {
    case 'AUTO':
    case 'VALIDATED':
      return { type: 'auto' };
    case 'NONE':
      return { type: 'none' };
    case 'ANY':
      return c.allowedFunctionNames?.length === 1 ? { type: 'tool', name: c.allowedFunctionNames[0] } : { type: 'required' };
    default:
      return undefined;
  }
}

function responseFormat(g: NonNullable<GenerateContentRequest['generationConfig']>): CanonicalResponseFormat | undefined {
  if (g.responseMimeType !== 'application/json') return undefined;
  const json = g.responseJsonSchema as Record<string, unknown> | undefined;
  const schema = json ?? (g.responseSchema ? fromGeminiSchema(g.responseSchema) : undefined);
  return schema ? { type: 'json_schema', name: 'response', schema } : { type: 'json' };
}
