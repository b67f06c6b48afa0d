import type { SseEvent } from '../types';
import type { NormalizedUsage } from './normalized';

/**
 * Watches one upstream (or passthrough) stream for billing: fed every parsed
 * SSE event, it keeps the usage reported so far, the number of generated
 * characters (to estimate an interrupted turn that never reported usage),
 * and whether the stream reached its protocol's proper end.
 */
export interface UsageAccumulator {
  push(event: SseEvent): void;
  readonly usage: NormalizedUsage | undefined;
  readonly outputChars: number;
  /** An upper bound of `outputChars` that costs nothing to read (when the accumulator defers counting). */
  readonly outputCharsAtMost?: number;
  readonly completed: boolean;
}

export function parseData(data: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(data);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function textLength(value: unknown): number {
  return typeof value === 'string' ? value.length : 0;
}
