import type { CanonicalChoice, CanonicalResponse, FinishReason, ResponseBlock } from '../../canonical/response';
import type { GeminiWireCandidate, GenerateContentResponse } from '../../generate-content/wire';
import { generateContentUsage } from '../../usage/generate-content';
import { ZERO_USAGE } from '../../usage/normalized';
import { newId } from '../ids';

const BLOCKED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
]);

/** Gemini finishReason -> canonical; STOP with function calls is a tool-call stop. */
export function geminiFinishIn(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason !== undefined && BLOCKED.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/**
 * An upstream GenerateContentResponse -> canonical response: each candidate
 * is a choice; text parts (thoughts excluded) are joined, functionCall parts
 * become tool calls. A prompt blocked before generation gives one empty
 * content_filter choice.
 */
export function decodeGenerateContentResponse(json: unknown): CanonicalResponse {
  const r = (json ?? {}) as GenerateContentResponse;
  let choices = (r.candidates ?? []).map(choice);
  if (choices.length === 0) choices = [{ content: [], finish: r.promptFeedback?.blockReason ? 'content_filter' : 'stop' }];
  return {
    id: r.responseId ?? newId('chatcmpl-'),
    model: r.modelVersion ?? '',
    choices,
    usage: generateContentUsage(r.usageMetadata) ?? { ...ZERO_USAGE },
  };
}

function choice(c: GeminiWireCandidate): CanonicalChoice {
  let text = '';
  const calls: ResponseBlock[] = [];
  for (const p of c.content?.parts ?? []) {
    if (typeof p.text === 'string' && !p.thought) text += p.text;
    if (p.functionCall) {
      calls.push({
        type: 'tool_call',
        id: p.functionCall.id ?? newId('call_'),
        name: p.functionCall.name ?? '',
        arguments: JSON.stringify(p.functionCall.args ?? {}),
      });
    }
  }
  const content: ResponseBlock[] = text ? [{ type: 'text', text }, ...calls] : calls;
  return { content, finish: geminiFinishIn(c.finishReason, calls.length > 0) };
}
