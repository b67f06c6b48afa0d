import { SseParser } from '../../protocols/sse';
import { DEFERRED_MAX_CHARS } from '../../protocols/usage/accumulator';
import type { StreamTranslator } from '../../protocols/translate/types';
import type { SseEvent } from '../../protocols/types';

/** Messages-protocol SSE text from [event, data] pairs, as the vendor writes it. */
export function messagesSse(events: Array<Record<string, unknown>>): string {
  return events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('');
}

/** data-only SSE text (chat-completions, Gemini alt=sse). */
export function dataSse(chunks: Array<Record<string, unknown> | string>, sep = '\n\n'): string {
  return chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}${sep}`).join('');
}

/** Parses SSE text in pieces of `size` bytes and feeds every event to the translator. */
export function run(translator: StreamTranslator, sse: string, size = 7) {
  const parser = new SseParser();
  const frames: string[] = [];
  const errors: unknown[] = [];
  let done = false;
  const feed = (events: SseEvent[]) => {
    for (const e of events) {
      const step = translator.push(e);
      frames.push(...step.frames);
      if (step.error !== undefined) errors.push(step.error);
      done = step.done;
    }
  };
  const bytes = Buffer.from(sse, 'utf8');
  for (let i = 0; i < bytes.length; i += size) feed(parser.push(bytes.subarray(i, i + size)));
  feed(parser.end());
  frames.push(...translator.end());
  return { frames, errors, done };
}

/** Frames written by a translator, parsed back: `{event?, json}` (json is '[DONE]' for the terminator). */
export function readFrames(frames: string[]): Array<{ event?: string; json: any }> {
  const parser = new SseParser();
  return parser.push(frames.join('')).map((e) => ({
    ...(e.event ? { event: e.event } : {}),
    json: e.data === '[DONE]' ? '[DONE]' : JSON.parse(e.data),
  }));
}

/** Events repeated past DEFERRED_MAX_CHARS, then more: a long stream, which counts on arrival past the limit. */
export function pastTheLimit<E extends { data: string }>(seed: E[], tail: E[]): E[] {
  const events: E[] = [];
  for (let n = 0; n <= DEFERRED_MAX_CHARS; ) {
    for (const e of seed) {
      events.push(e);
      n += e.data.length + 1;
    }
  }
  return [...events, ...tail];
}
