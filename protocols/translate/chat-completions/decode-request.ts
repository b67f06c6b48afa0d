import { errors } from '../../../domain/errors';
import type { ChatCompletionsRequest, ChatContentPart, KnownChatContentPart } from '../../chat-completions/schema';
import type {
  AssistantBlock,
  CanonicalRequest,
  CanonicalResponseFormat,
  CanonicalTool,
  CanonicalToolChoice,
  Decoded,
  TextBlock,
  UserBlock,
} from '../../canonical/request';
import { Conversation } from '../conversation';
import { parseArguments } from '../json-args';
import { mediaFromUrl } from '../media';

/** Chat fields with no canonical slot: always reported when sent. */
const NO_SLOT = [
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'modalities',
  'audio',
  'prediction',
  'service_tier',
  'store',
  'metadata',
  'reasoning_effort',
  'verbosity',
  'web_search_options',
  'functions',
  'function_call',
] as const;

/** chat-completions request -> canonical request. */
export function decodeChatRequest(body: ChatCompletionsRequest): Decoded {
  const dropped = new Set<string>();
  for (const key of NO_SLOT) {
    const v = body[key];
    if (v != null && v !== false) dropped.add(key);
  }

  const system: string[] = [];
  const talk = new Conversation();
  const toolNames = new Map<string, string>();

  body.messages.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        for (const b of userBlocks(m.content, dropped)) if (b.type === 'text') system.push(b.text);
        break;
      case 'user':
        talk.user(userBlocks(m.content, dropped));
        break;
      case 'assistant': {
        const blocks: AssistantBlock[] = [];
        if (m.content != null) for (const b of userBlocks(m.content, dropped)) if (b.type === 'text') blocks.push(b);
        (m.tool_calls ?? []).forEach((c, j) => {
          toolNames.set(c.id, c.function.name);
          const input = parseArguments(c.function.arguments, `messages.${i}.tool_calls.${j}.function.arguments`);
          blocks.push({ type: 'tool_call', id: c.id, name: c.function.name, input });
        });
        talk.assistant(blocks);
        break;
      }
      case 'tool': {
        const name = toolNames.get(m.tool_call_id);
        if (name === undefined) {
          const param = `messages.${i}.tool_call_id`;
          throw errors.invalidRequest(`messages[${i}].tool_call_id: no preceding assistant tool call has this id`, param);
        }
        const content = userBlocks(m.content, dropped).filter((b): b is TextBlock => b.type === 'text');
        talk.user([{ type: 'tool_result', toolCallId: m.tool_call_id, name, content }]);
        break;
      }
    }
  });

  const request: CanonicalRequest = {
    model: body.model,
    system,
    messages: talk.messages,
    tools: (body.tools ?? []).map(tool),
    toolChoice: toolChoice(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: body.stop == null ? undefined : typeof body.stop === 'string' ? [body.stop] : body.stop,
    stream: body.stream ?? undefined,
    n: body.n != null && body.n > 1 ? body.n : undefined,
    seed: body.seed ?? undefined,
    frequencyPenalty: body.frequency_penalty ?? undefined,
    presencePenalty: body.presence_penalty ?? undefined,
    responseFormat: responseFormat(body.response_format),
    user: body.user ?? undefined,
  };
  return { request, dropped: [...dropped] };
}

function userBlocks(content: string | ChatContentPart[], dropped: Set<string>): UserBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  const out: UserBlock[] = [];
  for (const raw of content) {
    const part = raw as KnownChatContentPart;
    switch (part.type) {
      case 'text':
        out.push({ type: 'text', text: part.text });
        break;
      case 'refusal':
        out.push({ type: 'text', text: part.refusal });
        break;
      case 'image_url':
        out.push({ type: 'image', source: mediaFromUrl(part.image_url.url) });
        break;
      case 'file':
        if (part.file.file_data) {
          const source = mediaFromUrl(part.file.file_data);
          out.push({ type: 'file', source, ...(part.file.filename ? { filename: part.file.filename } : {}) });
        } else dropped.add('messages.content.file.file_id');
        break;
      default:
        dropped.add(`messages.content.${part.type}`);
    }
  }
  return out;
}

function tool(t: NonNullable<ChatCompletionsRequest['tools']>[number]): CanonicalTool {
  if (t.type !== 'function') return { type: t.type };
  const f = t.function;
  return {
    type: 'function',
    name: f.name,
    ...(f.description ? { description: f.description } : {}),
    parameters: f.parameters ?? { type: 'object', properties: {} },
  };
}

function toolChoice(c: ChatCompletionsRequest['tool_choice']): CanonicalToolChoice | undefined {
  if (c == null) return undefined;
  if (typeof c === 'string') return { type: c };
  return { type: 'tool', name: c.function.name };
}

function responseFormat(f: ChatCompletionsRequest['response_format']): CanonicalResponseFormat | undefined {
  if (f == null || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json' };
  const s = f.json_schema;
  return {
    type: 'json_schema',
    name: s.name,
    schema: s.schema ?? {},
    ...(s.description ? { description: s.description } : {}),
    ...(s.strict != null ? { strict: s.strict } : {}),
  };
}
