import type {
  AssistantBlock,
  CanonicalField,
  CanonicalRequest,
  CanonicalTool,
  Encoded,
  UserBlock,
} from '../../canonical/request';
import { mediaToUrl } from '../media';

/**
 * canonical request -> chat-completions request body. Tool results become
 * `tool` messages placed before the rest of their user turn; a streamed
 * request asks for the usage chunk (`stream_options.include_usage`), which
 * billing and the client's own usage fields need.
 */
export function encodeChatRequest(req: CanonicalRequest): Encoded {
  const dropped: CanonicalField[] = [];
  const messages: Record<string, unknown>[] = [];
  if (req.system.length > 0) messages.push({ role: 'system', content: req.system.join('\n\n') });
  for (const m of req.messages) {
    if (m.role === 'user') messages.push(...userMessages(m.content, dropped));
    else messages.push(assistantMessage(m.content));
  }

  const body: Record<string, unknown> = {};
  if (req.model !== undefined) body.model = req.model;
  body.messages = messages;
  if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop?.length) body.stop = req.stop;
  if (req.n !== undefined) body.n = req.n;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.frequencyPenalty !== undefined) body.frequency_penalty = req.frequencyPenalty;
  if (req.presencePenalty !== undefined) body.presence_penalty = req.presencePenalty;
  if (req.user !== undefined) body.user = req.user;
  if (req.topK !== undefined) dropped.push('topK');
  const f = req.responseFormat;
  if (f?.type === 'json') body.response_format = { type: 'json_object' };
  else if (f?.type === 'json_schema') {
    body.response_format = {
      type: 'json_schema',
      json_schema: {
        name: f.name,
        schema: f.schema,
        ...(f.description ? { description: f.description } : {}),
        ...(f.strict !== undefined ? { strict: f.strict } : {}),
      },
    };
  }
  if (req.tools.length > 0) {
    body.tools = req.tools.map(tool);
    const c = req.toolChoice;
    if (c) body.tool_choice = c.type === 'tool' ? { type: 'function', function: { name: c.name } } : c.type;
    if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  }
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { body, dropped: [...new Set(dropped)] };
}

function userMessages(blocks: UserBlock[], dropped: CanonicalField[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const parts: Record<string, unknown>[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        parts.push({ type: 'text', text: b.text });
        break;
      case 'image':
        parts.push({ type: 'image_url', image_url: { url: mediaToUrl(b.source) } });
        break;
      case 'file':
        if (b.source.kind === 'base64') {
          parts.push({ type: 'file', file: { file_data: mediaToUrl(b.source), ...(b.filename ? { filename: b.filename } : {}) } });
        } else dropped.push('content.file');
        break;
      case 'tool_result': {
        if (b.content.some((c) => c.type === 'image')) dropped.push('toolResult.image');
        const text = b.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('');
        out.push({ role: 'tool', tool_call_id: b.toolCallId, content: text });
        break;
      }
    }
  }
  if (parts.length === 1 && parts[0].type === 'text') out.push({ role: 'user', content: parts[0].text });
  else if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

function assistantMessage(blocks: AssistantBlock[]): Record<string, unknown> {
  const text = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const calls = blocks.flatMap((b) =>
    b.type === 'tool_call'
      ? [{ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } }]
      : [],
  );
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function tool(t: CanonicalTool): Record<string, unknown> {
  if (t.type !== 'function') return { type: t.type };
  return {
    type: 'function',
    function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters },
  };
}
