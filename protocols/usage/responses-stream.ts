import type { SseEvent } from '../types';
import { DeferredChars, memberNames, parseData, textLength, type UsageAccumulator } from './accumulator';
import type { NormalizedUsage } from './normalized';
import { responsesUsage } from './responses';

const DELTAS = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.function_call_arguments.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
]);

const typeOf = (e: Record<string, unknown>, event: SseEvent): string => (typeof e.type === 'string' ? e.type : event.event) ?? '';
const deltaChars = (e: Record<string, unknown>, event: SseEvent): number => (DELTAS.has(typeOf(e, event)) ? textLength(e.delta) : 0);
/** The member `deltaChars` counts. */
const DELTA_MEMBER = memberNames('delta');
/** Could name a terminal event (response.completed, response.incomplete, response.failed). */
const terminal = (s: string | undefined): boolean => s !== undefined && (s.includes('complete') || s.includes('failed'));

/**
 * responses stream: usage arrives in the terminal event's `response.usage`.
 * Complete on response.completed (and response.incomplete, the other normal
 * end, e.g. when max_output_tokens was reached); response.failed carries
 * usage when the vendor reports it but is not a completed turn.
 *
 * Only an event whose data or name could spell a terminal type (`complete`,
 * `failed`, or any `\u` escape) is parsed on arrival; the deltas only add
 * generated characters and are kept as text until those are read.
 */
export class ResponsesUsageAccumulator implements UsageAccumulator {
  usage: NormalizedUsage | undefined;
  completed = false;
  private readonly chars = new DeferredChars((event) => {
    const e = parseData(event.data);
    return e ? deltaChars(e, event) : 0;
  }, DELTA_MEMBER);

  get outputChars(): number {
    return this.chars.total;
  }

  get outputCharsAtMost(): number {
    return this.chars.atMost;
  }

  push(event: SseEvent): void {
    if (!terminal(event.data) && !event.data.includes('\\u') && !terminal(event.event)) {
      this.chars.add(event);
      return;
    }
    const e = parseData(event.data);
    if (!e) return;
    const type = typeOf(e, event);
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      const response = e.response as { usage?: unknown } | undefined;
      this.usage = responsesUsage(response?.usage) ?? this.usage;
      if (type !== 'response.failed') this.completed = true;
      return;
    }
    this.chars.addCounted(deltaChars(e, event));
  }
}
