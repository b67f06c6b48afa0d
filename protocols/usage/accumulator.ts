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

/**
 * Raw text of unparsed events a stream keeps before it counts them, and from then on counts every
 * event as it arrives. A short answer (about 30 chunks) is never parsed; a long one holds at most this
 * much, once. Held events outlive the collector's young generation, so holding costs far more memory
 * than the text: 2,000 streams of 300 chunks peaked at 545-561 MB of RSS when each held up to 64 KB at
 * a time, 353-363 MB with this rule, 304-328 MB parsing every event (which costs a short stream about
 * 8 % more CPU); dev/bench/README.md, round 11.
 */
export const DEFERRED_MAX_CHARS = 8 * 1024;

/** Member names whose string values `stringValueChars` counts (one regular expression for them all). */
export interface MemberNames {
  readonly opening: RegExp;
}

/** The members of `names`, as `stringValueChars` takes them. */
export function memberNames(...names: string[]): MemberNames {
  const alternatives = names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  // `"name"`, JSON whitespace, `:`, JSON whitespace, and the opening quote of a string value.
  return { opening: new RegExp(`"(?:${alternatives})"[ \\t\\n\\r]*:[ \\t\\n\\r]*"`, 'g') };
}

/**
 * At least the characters of every JSON string value in `data` held by a member of `names`
 * (`"name": "..."` at any depth), read off the text without parsing it: an escape never decodes to
 * more characters than it spells, and a `"name"` followed by `:` is a member name (inside a string a
 * quote is always escaped; a match anywhere else only makes the figure larger). Not a bound for text
 * that spells a name with a `\u` escape: callers parse such events on arrival. One regular-expression
 * pass and no allocation: 0.24 us for a 300-character chunk, where JSON.parse takes 0.8 and five
 * indexOf scans 1.1.
 */
export function stringValueChars(data: string, names: MemberNames): number {
  const re = names.opening;
  let n = 0;
  re.lastIndex = 0;
  while (re.test(data)) {
    let j = re.lastIndex;
    const start = j;
    while (j < data.length) {
      const c = data.charCodeAt(j);
      if (c === 34) break; // the closing quote
      j += c === 92 ? 2 : 1; // a backslash escapes the next character
    }
    n += Math.min(j, data.length) - start;
    re.lastIndex = j + 1;
  }
  return n;
}

/**
 * Events that can only add generated characters, kept as text and parsed only
 * when the characters are read (`total`). `atMost` is free to read and never
 * below `total`: the strings under `names` in the events' text (the counting
 * function must count characters of JSON strings under those member names
 * only). For a usual turn that settles the bill without parsing any of them
 * (domain/usage-estimate.ts: a token's 16 characters against the envelope of
 * each chunk, which the raw length would have counted).
 */
export class DeferredChars {
  private counted = 0;
  private pending: SseEvent[] = [];
  private pendingChars = 0;
  private pendingBound = 0;
  /** Past DEFERRED_MAX_CHARS: a long answer, whose events are counted as they arrive. */
  private eager = false;

  constructor(
    private readonly count: (event: SseEvent) => number,
    private readonly names: MemberNames,
  ) {}

  add(event: SseEvent): void {
    if (this.eager) {
      this.counted += this.count(event);
      return;
    }
    this.pending.push(event);
    this.pendingChars += event.data.length;
    this.pendingBound += stringValueChars(event.data, this.names);
    if (this.pendingChars > DEFERRED_MAX_CHARS) {
      this.flush();
      this.eager = true;
    }
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
    return this.counted + this.pendingBound;
  }

  private flush(): void {
    const events = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    this.pendingBound = 0;
    for (const e of events) this.counted += this.count(e);
  }
}
