/**
 * The messages, responses and generate-content stream accumulators parse on
 * arrival only the events that can change the usage or the end, and count the
 * others' characters on demand (as chat-completions does, see
 * usage-deferred.test.ts). They must give exactly what parsing every event
 * gives, whatever the upstream writes: the marker words inside strings, types
 * spelled with escapes, events without a type in their data, data that is not
 * JSON, long streams.
 */
import test from 'ava';
import fc from 'fast-check';
import { MessagesUsageAccumulator } from '../../protocols/usage/messages-stream';
import { ResponsesUsageAccumulator } from '../../protocols/usage/responses-stream';
import { GenerateContentUsageAccumulator } from '../../protocols/usage/generate-content-stream';
import { messagesUsage } from '../../protocols/usage/messages';
import { responsesUsage } from '../../protocols/usage/responses';
import { generateContentUsage } from '../../protocols/usage/generate-content';
import type { NormalizedUsage } from '../../protocols/usage/normalized';
import type { SseEvent } from '../../protocols/types';
import type { UsageAccumulator } from '../../protocols/usage/accumulator';
import { pastTheLimit } from './helpers';

const parse = (data: string): any => {
  try {
    const v = JSON.parse(data);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
};
const len = (v: unknown) => (typeof v === 'string' ? v.length : 0);

/** The accumulators as they were: every event parsed on arrival (the references). */
class EagerMessages {
  raw: any;
  usage: NormalizedUsage | undefined;
  outputChars = 0;
  completed = false;
  push(event: SseEvent): void {
    const e = parse(event.data);
    if (!e) return;
    switch (e.type ?? event.event) {
      case 'message_start':
        this.raw = { ...e.message?.usage };
        this.usage = messagesUsage(this.raw);
        break;
      case 'message_delta': {
        this.raw ??= {};
        const usage = e.usage ?? {};
        for (const k in usage) if (usage[k] != null) this.raw[k] = usage[k];
        this.usage = messagesUsage(this.raw);
        break;
      }
      case 'content_block_start':
        this.outputChars += len(e.content_block?.text) + len(e.content_block?.name) + len(e.content_block?.thinking);
        break;
      case 'content_block_delta':
        this.outputChars += len(e.delta?.text) + len(e.delta?.partial_json) + len(e.delta?.thinking);
        break;
      case 'message_stop':
        this.completed = true;
        break;
    }
  }
}

const DELTAS = new Set(['response.output_text.delta', 'response.refusal.delta', 'response.function_call_arguments.delta', 'response.reasoning_summary_text.delta', 'response.reasoning_text.delta']);
class EagerResponses {
  usage: NormalizedUsage | undefined;
  outputChars = 0;
  completed = false;
  push(event: SseEvent): void {
    const e = parse(event.data);
    if (!e) return;
    const type = (typeof e.type === 'string' ? e.type : event.event) ?? '';
    if (DELTAS.has(type)) {
      this.outputChars += len(e.delta);
      return;
    }
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      this.usage = responsesUsage(e.response?.usage) ?? this.usage;
      if (type !== 'response.failed') this.completed = true;
    }
  }
}

class EagerGenerateContent {
  usage: NormalizedUsage | undefined;
  outputChars = 0;
  completed = false;
  push(event: SseEvent): void {
    const chunk = parse(event.data);
    if (!chunk) return;
    if (chunk.usageMetadata != null) this.usage = generateContentUsage(chunk.usageMetadata) ?? this.usage;
    for (const c of Array.isArray(chunk.candidates) ? chunk.candidates : []) {
      const parts = c?.content?.parts;
      if (Array.isArray(parts)) {
        for (const p of parts) {
          this.outputChars += len(p?.text);
          if (p?.functionCall !== undefined) this.outputChars += JSON.stringify(p.functionCall).length;
        }
      }
      if (c?.finishReason) this.completed = true;
    }
  }
}

type Eager = { usage: NormalizedUsage | undefined; outputChars: number; completed: boolean; push(e: SseEvent): void };
function agree(lazy: UsageAccumulator, ref: Eager, events: SseEvent[]): string | null {
  for (const e of events) {
    lazy.push(e);
    ref.push(e);
    if (lazy.completed !== ref.completed) return `completed after ${JSON.stringify(e)}`;
  }
  const bound = lazy.outputCharsAtMost ?? Infinity;
  if (JSON.stringify(lazy.usage) !== JSON.stringify(ref.usage)) return `usage ${JSON.stringify(lazy.usage)} vs ${JSON.stringify(ref.usage)}`;
  if (!(bound >= ref.outputChars)) return `bound ${bound} < ${ref.outputChars}`;
  if (lazy.outputChars !== ref.outputChars) return `chars ${lazy.outputChars} vs ${ref.outputChars}`;
  return null;
}

// Strings built from pieces that look like the markers.
const text = fc.oneof(
  fc.string(),
  fc.constantFrom('message_start', 'message_delta', 'message_stop', 'response.completed', 'complete', 'failed', 'usageMetadata', 'finishReason', '"finishReason":null', 'functionCall', '\\', '\\u0075', '"', 'é', '😀'),
);
/** As an upstream may write it: compact, spaced, or with the marker words spelled as \u escapes. */
const serialise = (o: unknown, how: number) => {
  const s = JSON.stringify(o);
  if (how === 1) return JSON.stringify(o, null, 1);
  if (how === 2) return s.replace(/message_|complete|failed|usageMetadata|finishReason|functionCall/g, (w) => `\\u00${w.charCodeAt(0).toString(16)}${w.slice(1)}`);
  return s;
};
const junk = fc.constantFrom('not json', 'null', '[]', '{"type":', '"message_stop"');
const eventName = (names: string[]) => fc.option(fc.constantFrom(...names), { nil: undefined });

const messagesUsageValue = fc.record({ input_tokens: fc.nat(50), output_tokens: fc.option(fc.nat(50), { nil: null }), cache_read_input_tokens: fc.nat(5) }, { requiredKeys: [] });
const MESSAGE_TYPES = ['message_start', 'message_delta', 'message_stop', 'content_block_start', 'content_block_delta', 'content_block_stop', 'ping'];
const messagesEvent = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.tuple(
      fc.record({
        type: fc.option(fc.constantFrom(...MESSAGE_TYPES), { nil: undefined }),
        message: fc.option(fc.record({ usage: messagesUsageValue }), { nil: undefined }),
        usage: fc.option(messagesUsageValue, { nil: undefined }),
        content_block: fc.option(fc.record({ type: fc.constantFrom('text', 'tool_use'), text: text, name: text }, { requiredKeys: [] }), { nil: undefined }),
        delta: fc.option(fc.record({ text: text, partial_json: text, thinking: text }, { requiredKeys: [] }), { nil: undefined }),
      }, { requiredKeys: [] }),
      fc.nat(2),
      eventName(MESSAGE_TYPES),
    ).map(([o, how, name]): SseEvent => (name ? { event: name, data: serialise(o, how) } : { data: serialise(o, how) })),
  },
  { weight: 1, arbitrary: fc.tuple(junk, eventName(MESSAGE_TYPES)).map(([data, name]): SseEvent => (name ? { event: name, data } : { data })) },
);

const RESPONSE_TYPES = ['response.created', 'response.output_text.delta', 'response.refusal.delta', 'response.function_call_arguments.delta', 'response.completed', 'response.incomplete', 'response.failed', 'response.output_item.done'];
const responsesEvent = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.tuple(
      fc.record({
        type: fc.option(fc.constantFrom(...RESPONSE_TYPES), { nil: undefined }),
        delta: text,
        response: fc.option(fc.record({ usage: fc.option(fc.record({ input_tokens: fc.nat(50), output_tokens: fc.nat(50) }), { nil: null }) }), { nil: undefined }),
      }, { requiredKeys: [] }),
      fc.nat(2),
      eventName(RESPONSE_TYPES),
    ).map(([o, how, name]): SseEvent => (name ? { event: name, data: serialise(o, how) } : { data: serialise(o, how) })),
  },
  { weight: 1, arbitrary: fc.tuple(junk, eventName(RESPONSE_TYPES)).map(([data, name]): SseEvent => (name ? { event: name, data } : { data })) },
);

const part = fc.record({ text: text, functionCall: fc.oneof(fc.constant(undefined), fc.record({ name: text, args: fc.dictionary(fc.string(), fc.oneof(fc.double({ noNaN: true }), fc.string())) })) }, { requiredKeys: [] });
const candidate = fc.record({
  content: fc.option(fc.record({ parts: fc.array(part, { maxLength: 2 }) }), { nil: undefined }),
  finishReason: fc.constantFrom(undefined, null, 'STOP', 'MAX_TOKENS', ''),
}, { requiredKeys: [] });
const gcEvent = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.tuple(
      fc.record({
        candidates: fc.array(candidate, { maxLength: 2 }),
        usageMetadata: fc.option(fc.record({ promptTokenCount: fc.nat(50), candidatesTokenCount: fc.nat(50) }, { requiredKeys: [] }), { nil: undefined }),
      }, { requiredKeys: [] }),
      fc.nat(2),
    ).map(([o, how]): SseEvent => ({ data: serialise(o, how) })),
  },
  { weight: 1, arbitrary: junk.map((data): SseEvent => ({ data })) },
);

const cases: Array<[string, fc.Arbitrary<SseEvent>, () => UsageAccumulator, () => Eager]> = [
  ['messages', messagesEvent, () => new MessagesUsageAccumulator(), () => new EagerMessages()],
  ['responses', responsesEvent, () => new ResponsesUsageAccumulator(), () => new EagerResponses()],
  ['generate-content', gcEvent, () => new GenerateContentUsageAccumulator(), () => new EagerGenerateContent()],
];

for (const [name, event, lazy, eager] of cases) {
  test(`${name}: any long stream (past the held limit) gives the same usage, end and characters as parsing every event`, (t) => {
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 6 }), fc.array(event, { maxLength: 12 }), (seed, tail) => {
        const why = agree(lazy(), eager(), pastTheLimit(seed, tail));
        if (why) throw new Error(why);
        return true;
      }),
      { numRuns: 300 },
    );
    t.pass();
  });
  test(`${name}: any stream gives the same usage, end and characters as parsing every event`, (t) => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 12 }), (events) => {
        const why = agree(lazy(), eager(), events);
        if (why) throw new Error(why);
        return true;
      }),
      { numRuns: 3000 },
    );
    t.pass();
  });
}

/** JSON.parse calls made by `fn`. */
function parses(fn: () => void): number {
  const parse = JSON.parse;
  let n = 0;
  JSON.parse = ((...args: Parameters<typeof JSON.parse>) => {
    n++;
    return parse(...args);
  }) as typeof JSON.parse;
  try {
    fn();
  } finally {
    JSON.parse = parse;
  }
  return n;
}

test('content events are kept as text until their characters are read; the bound is read off their text', (t) => {
  const m = new MessagesUsageAccumulator();
  const events: SseEvent[] = [
    { event: 'message_start', data: JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } }) },
    { event: 'content_block_start', data: JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) },
    { event: 'content_block_delta', data: JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }) },
    { event: 'content_block_stop', data: JSON.stringify({ type: 'content_block_stop', index: 0 }) },
    { event: 'message_delta', data: JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }) },
    { event: 'message_stop', data: JSON.stringify({ type: 'message_stop' }) },
  ];
  t.is(parses(() => events.forEach((e) => m.push(e))), 3, 'only the message_ events are parsed on arrival');
  t.true(m.completed);
  t.is(m.usage?.outputTokens, 2);
  t.is(parses(() => t.is(m.outputCharsAtMost, 5)), 0, 'the bound parses nothing');
  t.is(parses(() => t.is(m.outputChars, 5)), 3, 'the exact count parses the content events');

  const r = new ResponsesUsageAccumulator();
  const delta = { event: 'response.output_text.delta', data: JSON.stringify({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi there' }) };
  t.is(parses(() => r.push(delta)), 0);
  r.push({ event: 'response.completed', data: JSON.stringify({ type: 'response.completed', response: { usage: { input_tokens: 3, output_tokens: 2 } } }) });
  t.true(r.completed);
  t.is(parses(() => t.is(r.outputCharsAtMost, 8)), 0);
  t.is(r.outputChars, 8);

  const g = new GenerateContentUsageAccumulator();
  const chunk = { data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'abc' }], role: 'model' }, index: 0 }], modelVersion: 'gemini' }) };
  t.is(parses(() => g.push(chunk)), 0);
  g.push({ data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'd' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2 } }) });
  t.true(g.completed);
  t.is(parses(() => t.is(g.outputCharsAtMost, 4)), 0);
  t.is(g.outputChars, 4);
});

test('long streams are counted in pieces and stay exact', (t) => {
  const m = new MessagesUsageAccumulator();
  const ref = new EagerMessages();
  const g = new GenerateContentUsageAccumulator();
  const gref = new EagerGenerateContent();
  for (let i = 0; i < 3000; i++) {
    const e = { event: 'content_block_delta', data: JSON.stringify({ type: 'content_block_delta', delta: { text: `token ${i} ` } }) };
    m.push(e);
    ref.push(e);
    const c = { data: JSON.stringify({ candidates: [{ content: { parts: [{ text: `token ${i} ` }] } }] }) };
    g.push(c);
    gref.push(c);
  }
  t.is(m.outputChars, ref.outputChars);
  t.is(g.outputChars, gref.outputChars);
});
