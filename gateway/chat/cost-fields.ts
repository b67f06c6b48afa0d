import type { Protocol } from '../../protocols/types';
import { formatSse } from '../../protocols/sse';
import type { CostReport } from '../../domain/cost-report';
import type { Ctx } from '../context';

/**
 * The cost fields of a chat answer (issue 26): header `x-gateway-cost` and, in the body's usage object,
 * `cost` and `cost_details` (usage on chat-completions, responses and messages; usageMetadata on
 * generate-content). The values come from the charge the settlement wrote (domain/cost-report.ts).
 */
export const COST_HEADER = 'x-gateway-cost';

type Json = Record<string, any>;

/** The object that holds usage in an answer (or a stream event) of this protocol, created when absent. */
function usageHolder(protocol: Protocol, body: Json, event: boolean): Json | undefined {
  if (!body || typeof body !== 'object') return undefined;
  if (protocol === 'generate-content') return (body.usageMetadata ??= {});
  if (protocol === 'responses' && event) {
    if (!body.response || typeof body.response !== 'object') return undefined;
    return (body.response.usage ??= {});
  }
  if (body.usage === null || typeof body.usage !== 'object') body.usage = {};
  return body.usage;
}

/** Put `cost` and `cost_details` beside the usage of an answer body (mutates it). */
export function addCostFields(protocol: Protocol, body: Json, report: CostReport, event = false): void {
  const usage = usageHolder(protocol, body, event);
  if (!usage) return;
  usage.cost = report.cost;
  usage.cost_details = report.cost_details;
}

export function setCostHeader(ctx: Ctx, report: CostReport): void {
  ctx.set(COST_HEADER, report.cost);
}

/**
 * Whether an outgoing stream frame (SSE, or an item of a generate-content JSON array) is the one that
 * carries the turn's usage: chat-completions' trailing chunk with empty choices, messages'
 * message_delta, responses' final response event, generate-content's chunk with the finish reason.
 * (A marker inside a JSON string is escaped, so these substrings only match structure.)
 */
export function isUsageFrame(protocol: Protocol, frame: string): boolean {
  switch (protocol) {
    case 'chat-completions':
      return /"usage":\s*\{/.test(frame) && /"choices":\s*\[\]/.test(frame);
    case 'messages':
      return /"type":\s*"message_delta"/.test(frame);
    case 'responses':
      return /"type":\s*"response\.(?:completed|incomplete|failed)"/.test(frame);
    case 'generate-content':
      return frame.includes('"usageMetadata"') && frame.includes('"finishReason"');
    default:
      return false;
  }
}

/** The frame with the cost fields added to its usage; unchanged if it cannot be read. */
export function rewriteUsageFrame(protocol: Protocol, frame: string, report: CostReport): string {
  try {
    // A generate-content JSON array item: `[` or `,\r\n` then the chunk's JSON.
    const arrayItem = /^(\[|,\r\n)?\s*\{/.exec(frame);
    if (arrayItem && !frame.startsWith('data:') && !frame.startsWith('event:')) {
      const prefix = arrayItem[1] ?? '';
      const body = JSON.parse(frame.slice(prefix.length)) as Json;
      addCostFields(protocol, body, report, true);
      return prefix + JSON.stringify(body);
    }
    let event: string | undefined;
    const data: string[] = [];
    for (const line of frame.split(/\r\n|\r|\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
    const body = JSON.parse(data.join('\n')) as Json;
    addCostFields(protocol, body, report, true);
    return formatSse(JSON.stringify(body), event);
  } catch {
    return frame;
  }
}

/**
 * Splits outgoing stream text into frames: SSE frames end with a blank line; a generate-content JSON
 * array's items start with `[` or `,\r\n`.
 */
export function splitFrames(text: string, array: boolean): string[] {
  if (!text) return [];
  if (array) {
    const out: string[] = [];
    let start = 0;
    for (let i = text.indexOf(',\r\n', 1); i !== -1; i = text.indexOf(',\r\n', i + 3)) {
      // Only a separator between items: the item before it ends with `}`.
      if (text[i - 1] !== '}') continue;
      out.push(text.slice(start, i));
      start = i;
    }
    out.push(text.slice(start));
    return out;
  }
  const out: string[] = [];
  let start = 0;
  for (let i = text.indexOf('\n\n'); i !== -1; i = text.indexOf('\n\n', start)) {
    out.push(text.slice(start, i + 2));
    start = i + 2;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}
