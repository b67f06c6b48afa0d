import { errors } from '../../../domain/errors';
import type {
  AssistantBlock,
  CanonicalRequest,
  CanonicalTool,
  CanonicalToolChoice,
  Decoded,
  ImageBlock,
  MediaSource,
  TextBlock,
  UserBlock,
} from '../../canonical/request';
import type { KnownMessagesBlock, MessagesRequest } from '../../messages/schema';
import { Conversation } from '../conversation';

/** messages fields with no canonical slot: reported when sent. */
const NO_SLOT = ['thinking', 'service_tier', 'container', 'mcp_servers', 'context_management'] as const;

/** messages request -> canonical request. */
export function decodeMessagesRequest(body: MessagesRequest): Decoded {
  const dropped = new Set<string>();
  for (const key of NO_SLOT) if (body[key] != null) dropped.add(key);
  const toolNames = new Map<string, string>();
  const talk = new Conversation();

  const system =
    body.system === undefined
      ? []
      : typeof body.system === 'string'
        ? [body.system]
        : body.system.map((b) => {
            if (b.cache_control) dropped.add('cache_control');
            return b.text;
          });

  body.messages.forEach((m, i) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
    const user: UserBlock[] = [];
    const assistant: AssistantBlock[] = [];
    for (const raw of blocks) {
      const b = raw as KnownMessagesBlock;
      if ('cache_control' in b && b.cache_control) dropped.add('cache_control');
      switch (b.type) {
        case 'text':
          (m.role === 'user' ? user : assistant).push({ type: 'text', text: b.text });
          break;
        case 'image': {
          const source = media(b.source);
          if (source) user.push({ type: 'image', source });
          else dropped.add('messages.content.image.source.file');
          break;
        }
        case 'document': {
          const source = media(b.source);
          if (source) user.push({ type: 'file', source, ...(b.title ? { filename: b.title } : {}) });
          else dropped.add(`messages.content.document.source.${b.source.type}`);
          break;
        }
        case 'tool_use':
          toolNames.set(b.id, b.name);
          assistant.push({ type: 'tool_call', id: b.id, name: b.name, input: b.input });
          break;
        case 'tool_result': {
          const name = toolNames.get(b.tool_use_id);
          if (name === undefined) {
            const param = `messages.${i}.content`;
            throw errors.invalidRequest(
              `messages[${i}].content: tool_result block references an unknown tool_use_id '${b.tool_use_id}'`,
              param,
            );
          }
          user.push({
            type: 'tool_result',
            toolCallId: b.tool_use_id,
            name,
            content: resultContent(b.content, dropped),
            ...(b.is_error ? { isError: true } : {}),
          });
          break;
        }
        default:
          dropped.add(`messages.content.${b.type}`);
      }
    }
    if (m.role === 'user') talk.user(user);
    else talk.assistant(assistant);
  });

  const tools: CanonicalTool[] = [];
  for (const t of body.tools ?? []) {
    if (t.cache_control) dropped.add('cache_control');
    if (t.type === undefined || t.type === 'custom') {
      const c = t as { name: string; description?: string; input_schema: Record<string, unknown> };
      tools.push({ type: 'function', name: c.name, ...(c.description ? { description: c.description } : {}), parameters: c.input_schema });
    } else if (t.type.startsWith('web_search')) tools.push({ type: 'web_search' });
    else dropped.add(`tools.${t.type}`);
  }

  const choice = body.tool_choice;
  const request: CanonicalRequest = {
    model: body.model,
    system,
    messages: talk.messages,
    tools,
    toolChoice: toolChoice(choice),
    parallelToolCalls: choice && 'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use ? false : undefined,
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k,
    stop: body.stop_sequences,
    stream: body.stream,
    user: body.metadata?.user_id ?? undefined,
  };
  return { request, dropped: [...dropped] };
}

type Source = { type: string; media_type?: string; data?: string; url?: string };

function media(s: Source): MediaSource | undefined {
  if (s.type === 'base64' && s.media_type && s.data !== undefined) return { kind: 'base64', mediaType: s.media_type, data: s.data };
  if (s.type === 'url' && s.url) return { kind: 'url', url: s.url };
  if (s.type === 'text' && s.data !== undefined) {
    return { kind: 'base64', mediaType: s.media_type ?? 'text/plain', data: Buffer.from(s.data, 'utf8').toString('base64') };
  }
  return undefined;
}

function resultContent(content: unknown, dropped: Set<string>): Array<TextBlock | ImageBlock> {
  if (content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const out: Array<TextBlock | ImageBlock> = [];
  for (const raw of content as KnownMessagesBlock[]) {
    if (raw.type === 'text') out.push({ type: 'text', text: raw.text });
    else if (raw.type === 'image') {
      const source = media(raw.source);
      if (source) out.push({ type: 'image', source });
    } else dropped.add(`messages.content.tool_result.content.${raw.type}`);
  }
  return out;
}

function toolChoice(c: MessagesRequest['tool_choice']): CanonicalToolChoice | undefined {
  if (!c) return undefined;
  switch (c.type) {
    case 'auto':
      return { type: 'auto' };
    case 'any':
      return { type: 'required' };
    case 'none':
      return { type: 'none' };
    case 'tool':
      return { type: 'tool', name: c.name };
  }
}
