import type { SseEvent } from '../types';
import { parseData, textLength, type UsageAccumulator } from './accumulator';
import type { NormalizedUsage } from './normalized';
import { responsesUsage } from './responses';

const DELTAS = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.function_call_arguments.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
]);

/**
 * responses stream: usage arrives in the terminal event's `response.usage`.
 * Complete on response.completed (and response.incomplete, the other normal
 * end, e.g. when max_output_tokens was reached); response.failed carries
 * usage when the vendor reports it but is not a completed turn.
 */
export class ResponsesUsageAccumulator implements UsageAccumulator {
  usage: NormalizedUsage | undefined;
  outputChars = 0;
  completed = false;

  push(event: SseEvent): void {
    const e = parseData(event.data);
    if (!e) return;
    const type = (typeof e.type === 'string' ? e.type : event.event) ?? '';
    if (DELTAS.has(type)) {
      this.outputChars += textLength(e.delta);
      return;
    }
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      const response = e.response as { usage?: unknown } | undefined;
      this.usage = responsesUsage(response?.usage) ?? this.usage;
      if (type !== 'response.failed') this.completed = true;
    }
  }
}
