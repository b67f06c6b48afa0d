import { z } from 'zod';
import { GatewayError } from '../../domain/errors';
import { BATCH_LIMITS, OPENAI_BATCH_ENDPOINTS, type BatchEndpoint } from './limits';

/** One request of a batch, as the engine runs it. */
export interface LineInput {
  custom_id: string;
  url: BatchEndpoint;
  body: Record<string, unknown>;
}

const CustomId = z.string().min(1).max(BATCH_LIMITS.maxCustomIdLength);

/** A line of an OpenAI batch input file (https://platform.openai.com/docs/api-reference/batch/request-input). */
export const OpenAiInputLine = z.object({
  custom_id: CustomId,
  method: z.literal('POST'),
  url: z.enum(OPENAI_BATCH_ENDPOINTS),
  body: z.looseObject({ model: z.string().min(1) }),
});

export const CreateBatchBody = z.object({
  input_file_id: z.string().min(1),
  endpoint: z.enum(OPENAI_BATCH_ENDPOINTS),
  completion_window: z.literal('24h'),
  metadata: z.record(z.string(), z.string().max(512)).nullish(),
});

/** Anthropic Message Batches create body (https://docs.anthropic.com/en/api/creating-message-batches). */
export const CreateMessageBatchBody = z.object({
  requests: z.array(z.object({ custom_id: CustomId, params: z.looseObject({ model: z.string().min(1), max_tokens: z.number().int().positive(), messages: z.array(z.unknown()) }) })).min(1),
});

export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().optional(),
  after_id: z.string().optional(),
  before_id: z.string().optional(),
});

/** `GET /v1/files` (https://platform.openai.com/docs/api-reference/files/list): newest first by default, paged with `after`. */
export const FilesListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(10_000).default(10_000),
  after: z.string().min(1).optional().meta({ description: 'The `last_id` of the previous page' }),
  order: z.enum(['asc', 'desc']).default('desc').meta({ description: 'By `created_at` (files created in the same millisecond by id)' }),
  purpose: z.string().min(1).optional().meta({ description: 'Only files of this purpose (`batch` or `batch_output`)' }),
});

export const limitError = (message: string, param?: string) => new GatewayError('invalid_request', message, { status: 400, param });

/** Parse an uploaded JSONL batch file: every line checked, the first problem named with its line number. */
export function parseOpenAiLines(content: string, endpoints: readonly BatchEndpoint[] = OPENAI_BATCH_ENDPOINTS): LineInput[] {
  const out: LineInput[] = [];
  const seen = new Set<string>();
  const raw = content.split(/\r?\n/);
  for (let i = 0; i < raw.length; i++) {
    const text = raw[i].trim();
    if (!text) continue;
    if (out.length >= BATCH_LIMITS.maxLines) throw limitError(`the file has more than ${BATCH_LIMITS.maxLines} lines, the limit of lines per batch`, 'file');
    if (Buffer.byteLength(text) > BATCH_LIMITS.maxLineBytes) throw limitError(`line ${i + 1} is larger than ${BATCH_LIMITS.maxLineBytes} bytes, the limit of one line`, 'file');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw limitError(`line ${i + 1} is not valid JSON`, 'file');
    }
    const p = (endpoints === OPENAI_BATCH_ENDPOINTS ? OpenAiInputLine : OpenAiInputLine.extend({ url: z.enum(endpoints as [BatchEndpoint, ...BatchEndpoint[]]) })).safeParse(json);
    if (!p.success) {
      const issue = p.error.issues[0];
      throw limitError(`line ${i + 1}: ${issue.path.join('.') || 'line'}: ${issue.message} (each line is {custom_id, method: "POST", url: one of ${endpoints.join(', ')}, body})`, 'file');
    }
    if (seen.has(p.data.custom_id)) throw limitError(`line ${i + 1}: custom_id '${p.data.custom_id}' is used twice; each line needs its own`, 'file');
    seen.add(p.data.custom_id);
    out.push({ custom_id: p.data.custom_id, url: p.data.url as BatchEndpoint, body: p.data.body });
  }
  if (out.length === 0) throw limitError('the file has no lines', 'file');
  return out;
}

export const linesToJsonl = (lines: LineInput[]) => lines.map((l) => JSON.stringify({ custom_id: l.custom_id, method: 'POST', url: l.url, body: l.body })).join('\n') + '\n';

/** Every endpoint a stored batch's lines may call (Message Batches lines call /v1/messages). */
export const ALL_BATCH_ENDPOINTS: readonly BatchEndpoint[] = [...OPENAI_BATCH_ENDPOINTS, '/v1/messages'];
