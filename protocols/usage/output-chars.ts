import type { Protocol } from '../types';
import { asRecord } from './normalized';
import { textLength } from './accumulator';

type Rec = Record<string, unknown>;
const list = (v: unknown): Rec[] => (Array.isArray(v) ? v.filter((x): x is Rec => x !== null && typeof x === 'object') : []);
const json = (v: unknown): number => (v === undefined ? 0 : JSON.stringify(v).length);

/**
 * Characters of generated output in a non-streamed response body (text,
 * reasoning text, refusals, tool names and arguments): what the stream
 * accumulators count event by event, for the same estimate (spec 1 section 6).
 */
export function outputChars(protocol: Protocol, body: unknown): number {
  const r = asRecord(body);
  if (!r) return 0;
  let n = 0;
  switch (protocol) {
    case 'chat-completions':
      for (const c of list(r.choices)) {
        const m = asRecord(c.message) ?? {};
        n += textLength(m.content) + textLength(m.reasoning_content) + textLength(m.refusal);
        for (const t of list(m.tool_calls)) {
          const f = asRecord(t.function) ?? {};
          n += textLength(f.name) + textLength(f.arguments);
        }
      }
      return n;
    case 'messages':
      for (const b of list(r.content)) n += textLength(b.text) + textLength(b.thinking) + textLength(b.name) + (b.type === 'tool_use' ? json(b.input) : 0);
      return n;
    case 'responses':
      for (const item of list(r.output)) {
        n += textLength(item.arguments) + (item.type === 'function_call' ? textLength(item.name) : 0);
        for (const c of list(item.content)) n += textLength(c.text) + textLength(c.refusal);
        for (const s of list(item.summary)) n += textLength(s.text);
      }
      return n;
    case 'generate-content':
      for (const c of list(r.candidates)) {
        for (const p of list(asRecord(c.content)?.parts)) n += textLength(p.text) + (p.functionCall !== undefined ? json(p.functionCall) : 0);
      }
      return n;
  }
}
