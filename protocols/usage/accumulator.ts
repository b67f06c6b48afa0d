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

/**
 * True when `word` occurs in `data` other than as `word":null`. JSON cannot
 * spell a key without its letters (or a `\u` escape, which the caller checks
 * for), and `word":null` with an unescaped quote is a member named (or
 * ending in) `word` whose value is null: so when this is false, the chunk
 * has no member `word` with a value other than null.
 */
export function hasNonNull(data: string, word: string): boolean {
  for (let i = data.indexOf(word); i !== -1; i = data.indexOf(word, i + word.length)) {
    if (!data.startsWith('":null', i + word.length)) return true;
  }
  return false;
}

export function textLength(value: unknown): number {
  return typeof value === 'string' ? value.length : 0;
}

/** Raw text of unparsed events kept per stream before they are counted at once (bounds the memory of a long stream). */
export const DEFERRED_MAX_CHARS = 64 * 1024;

/**
 * Events that can only add generated characters, kept as text and parsed only
 * when the characters are read (`total`). `atMost` is free to read and never
 * below `total`: the counting function must count characters of JSON strings
 * of the event's data only (a JSON string never decodes to more characters
 * than its text).
 */
export class DeferredChars {
  private counted = 0;
  private pending: SseEvent[] = [];
  private pendingChars = 0;

  constructor(private readonly count: (event: SseEvent) => number) {}

  add(event: SseEvent): void {
    this.pending.push(event);
    this.pendingChars += event.data.length;
    if (this.pendingChars > DEFERRED_MAX_CHARS) this.flush();
  }

  /** Characters counted right away (an event parsed on arrival). */
  addCounted(n: number): void {
    this.counted += n;
  }

  get total(): number {
    if (this.pending.length > 0) this.flush();
    return this.counted;
  }

  get atMost(): number {
    return this.counted + this.pendingChars;
  }

  private flush(): void {
    const events = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    for (const e of events) this.counted += this.count(e);
  }
}
