import type {
  AssistantBlock,
  CanonicalField,
  CanonicalRequest,
  CanonicalTool,
  Encoded,
  MediaSource,
  UserBlock,
} from '../../canonical/request';

/** The vendor's web search server tool, the counterpart of chat's built-in `web_search`. */
export const MESSAGES_WEB_SEARCH_TOOL = { type: 'web_search_20250305', name: 'web_search' } as const;

export interface MessagesEncodeOptions {
  /** `max_tokens` is required by this protocol: used when the client sent none. */
  defaultMaxTokens: number;
}

/** canonical request -> messages request body. */
export function encodeMessagesRequest(req: CanonicalRequest, opts: MessagesEncodeOptions): Encoded {
  const dropped: CanonicalField[] = [];
  const body: Record<string, unknown> = {};
  if (req.model !== undefined) body.model = req.model;
  body.max_tokens = req.maxTokens ?? opts.defaultMaxTokens;
  if (req.system.length === 1) body.system = req.system[0];
  else if (req.system.length > 1) body.system = req.system.map((text) => ({ type: 'text', text }));

  const messages: Array<{ role: string; content: unknown[] }> = [];
  for (const m of req.messages) {
    const content = m.role === 'user' ? userContent(m.content, dropped) : assistantContent(m.content);
    if (content.length > 0) messages.push({ role: m.role, content });
  }
  body.messages = messages;

  const tools: unknown[] = [];
  for (const t of req.tools) {
    const encoded = tool(t);
    if (encoded) tools.push(encoded);
    else dropped.push(`tools.${t.type}` as CanonicalField);
  }
  if (tools.length > 0) {
    body.tools = tools;
    const choice = toolChoice(req);
    if (choice) body.tool_choice = choice;
  }
  if (req.stop?.length) body.stop_sequences = req.stop;
  // This protocol's temperature range is 0..1; chat clients may send up to 2.
  if (req.temperature !== undefined) body.temperature = Math.min(req.temperature, 1);
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topK !== undefined) body.top_k = req.topK;
  if (req.stream) body.stream = true;
  if (req.user !== undefined) body.metadata = { user_id: req.user };

  if (req.n !== undefined) dropped.push('n');
  if (req.seed !== undefined) dropped.push('seed');
  if (req.frequencyPenalty !== undefined) dropped.push('frequencyPenalty');
  if (req.presencePenalty !== undefined) dropped.push('presencePenalty');
  if (req.responseFormat !== undefined) dropped.push('responseFormat');
  return { body, dropped: [...new Set(dropped)] };
}

function userContent(blocks: UserBlock[], dropped: CanonicalField[]): unknown[] {
  const results: unknown[] = [];
  const rest: unknown[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        if (b.text !== '') rest.push({ type: 'text', text: b.text });
        break;
      case 'image':
        rest.push({ type: 'image', source: source(b.source) });
        break;
      case 'file': {
        const doc = documentSource(b.source);
        if (doc) rest.push({ type: 'document', source: doc, ...(b.filename ? { title: b.filename } : {}) });
        else dropped.push('content.file');
        break;
      }
      case 'tool_result': {
        const content =
          b.content.length === 1 && b.content[0].type === 'text'
            ? b.content[0].text
            : b.content.map((c) => (c.type === 'text' ? { type: 'text', text: c.text } : { type: 'image', source: source(c.source) }));
        results.push({
          type: 'tool_result',
          tool_use_id: b.toolCallId,
          content,
          ...(b.isError ? { is_error: true } : {}),
        });
        break;
      }
    }
  }
  // tool_result blocks must open the user turn that answers the tool calls.
  return results.length === 0 ? rest : [...results, ...rest];
}

function assistantContent(blocks: AssistantBlock[]): unknown[] {
  const out: unknown[] = [];
  for (const b of blocks) {
    if (b.type === 'text') {
      if (b.text !== '') out.push({ type: 'text', text: b.text });
    } else out.push({ type: 'tool_use', id: b.id, name: b.name, input: b.input });
  }
  return out;
}

function source(s: MediaSource): Record<string, string> {
  return s.kind === 'url' ? { type: 'url', url: s.url } : { type: 'base64', media_type: s.mediaType, data: s.data };
}

/** PDFs (inline or by URL) and inline plain text are documents here; other files are not. */
function documentSource(s: MediaSource): Record<string, string> | undefined {
  if (s.kind === 'url') {
    const pdf = s.mediaType === undefined || s.mediaType === 'application/pdf';
    return pdf ? { type: 'url', url: s.url } : undefined;
  }
  if (s.mediaType === 'application/pdf') return { type: 'base64', media_type: s.mediaType, data: s.data };
  if (s.mediaType === 'text/plain') {
    return { type: 'text', media_type: 'text/plain', data: Buffer.from(s.data, 'base64').toString('utf8') };
  }
  return undefined;
}

function tool(t: CanonicalTool): unknown {
  switch (t.type) {
    case 'function':
      return {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        input_schema: t.parameters.type === undefined ? { type: 'object', ...t.parameters } : t.parameters,
      };
    case 'web_search':
      return { ...MESSAGES_WEB_SEARCH_TOOL };
    default:
      return undefined;
  }
}

function toolChoice(req: CanonicalRequest): Record<string, unknown> | undefined {
  const noParallel = req.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  const c = req.toolChoice;
  if (!c) return req.parallelToolCalls === false ? { type: 'auto', ...noParallel } : undefined;
  switch (c.type) {
    case 'auto':
      return { type: 'auto', ...noParallel };
    case 'none':
      return { type: 'none' };
    case 'required':
      return { type: 'any', ...noParallel };
    case 'tool':
      return { type: 'tool', name: c.name, ...noParallel };
  }
}
