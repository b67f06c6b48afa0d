/**
 * The chat-completions stream accumulator parses only the chunks that can
 * change the bill (a non-null usage or finish_reason) as they arrive and
 * counts the rest on demand. It must give exactly what parsing every chunk
 * gives, whatever the upstream writes: the words inside strings, keys spelled
 * with escapes or spaces, usage in several chunks, data that is not JSON.
 */
import test from 'ava';
import fc from 'fast-check';
import { ChatCompletionsUsageAccumulator } from '../../protocols/usage/chat-completions-stream';
import { chatUsage } from '../../protocols/usage/chat-completions';
import type { NormalizedUsage } from '../../protocols/usage/normalized';
import { usageToBill } from '../../domain/usage-estimate';
import { DEFERRED_MAX_CHARS, memberNames, stringValueChars } from '../../protocols/usage/accumulator';
import { pastTheLimit } from './helpers';

/** The accumulator as it was: every chunk parsed on arrival (the reference). */
class EagerReference {
  usage: NormalizedUsage | undefined;
  outputChars = 0;
  completed = false;
  push(data: string): void {
    if (data.trim() === '[DONE]') {
      this.completed = true;
      return;
    }
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    if (chunk === null || typeof chunk !== 'object' || Array.isArray(chunk)) return;
    if (chunk.usage != null) this.usage = chatUsage(chunk.usage) ?? this.usage;
    const len = (v: unknown) => (typeof v === 'string' ? v.length : 0);
    for (const c of Array.isArray(chunk.choices) ? chunk.choices : []) {
      const d = c?.delta;
      if (d) {
        this.outputChars += len(d.content) + len(d.reasoning_content) + len(d.refusal);
        for (const t of d.tool_calls ?? []) this.outputChars += len(t?.function?.name) + len(t?.function?.arguments);
      }
      if (c?.finish_reason) this.completed = true;
    }
  }
}

function both(events: string[]) {
  const lazy = new ChatCompletionsUsageAccumulator();
  const ref = new EagerReference();
  for (const e of events) {
    lazy.push({ data: e });
    ref.push(e);
  }
  return { lazy, ref };
}

function same(t: import('ava').ExecutionContext, events: string[]) {
  const { lazy, ref } = both(events);
  const bound = lazy.outputCharsAtMost;
  t.deepEqual(lazy.usage, ref.usage);
  t.is(lazy.completed, ref.completed);
  t.is(lazy.outputChars, ref.outputChars);
  t.true(bound >= ref.outputChars);
}

const usage = { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 };
const chunk = (delta: unknown, finish: unknown = null, u: unknown = null) => JSON.stringify({ id: 'c', choices: [{ index: 0, delta, finish_reason: finish }], usage: u });

test('content deltas are not parsed until counted; usage and finish chunks are', (t) => {
  const events = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ' world' }), chunk({}, 'stop'), JSON.stringify({ id: 'c', choices: [], usage }), '[DONE]'];
  const lazy = new ChatCompletionsUsageAccumulator();
  for (const e of events) lazy.push({ data: e });
  t.true(lazy.completed);
  t.deepEqual(lazy.usage, chatUsage(usage));
  // Nothing of the content chunks was parsed: the bound is read off their text (the strings under
  // content, reasoning_content, refusal, name, arguments), not their whole JSON.
  const parse = JSON.parse;
  let parsed = 0;
  JSON.parse = ((...args: Parameters<typeof JSON.parse>) => (parsed++, parse(...args))) as typeof JSON.parse;
  try {
    t.is(lazy.outputCharsAtMost, 11);
    t.is(parsed, 0);
    t.is(lazy.outputChars, 11);
    t.is(parsed, 3, 'the exact count parses the three content chunks');
  } finally {
    JSON.parse = parse;
  }
  same(t, events);
});

test('the words usage and finish_reason inside content strings', (t) => {
  same(t, [
    chunk({ content: 'the "usage":{"prompt_tokens":5} and "finish_reason":"stop" as text' }),
    chunk({ content: 'usage":null finish_reason":null' }),
    chunk({ content: 'ends in a backslash \\' }),
    chunk({}, 'stop'),
  ]);
});

test('keys spelled with escapes or spaces, members ending in the word, duplicates', (t) => {
  same(t, [
    '{"choices":[{"delta":{"content":"ab"},"finish\\u005freason":"length"}]}',
    '{"choices":[],"\\u0075sage":{"prompt_tokens":3,"completion_tokens":4}}',
  ]);
  same(t, ['{"choices":[{"delta":{"content":"ab"},"finish_reason" : "stop"}], "usage" :{"prompt_tokens":7,"completion_tokens":1}}']);
  same(t, ['{"choices":[],"prompt_usage":null,"usage":{"prompt_tokens":2,"completion_tokens":2}}']);
  same(t, ['{"choices":[{"delta":{"content":"x"},"finish_reason":"stop","finish_reason":null}]}']);
  same(t, ['{"choices":[{"delta":{"content":"x"},"finish_reason":null,"finish_reason":"stop"}]}']);
  same(t, ['{"usage":{"prompt_tokens":9,"completion_tokens":9},"usage":null,"choices":[]}']);
  same(t, ['{"choices":[{"delta":{"content":"x"},"finish_reason":false}]}', '{"choices":[{"delta":{"content":"y"},"finish_reason":""}]}']);
});

test('usage in several chunks: the last non-null one counts, a later null keeps it', (t) => {
  same(t, [
    JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }),
    chunk({ content: 'abc' }),
    JSON.stringify({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 6 } }),
    chunk({ content: 'd' }, null, null),
  ]);
});

test('data that is not a JSON object, and [DONE] with spaces', (t) => {
  same(t, ['not json', '[1,2]', '"usage"', 'null', '{"choices":', chunk({ content: 'é😀' }), '  [DONE]  ']);
});

test('a long stream is counted in pieces and stays exact', (t) => {
  const events = Array.from({ length: 3000 }, (_, i) => chunk({ content: `token ${i} ` }));
  const { lazy, ref } = both(events);
  t.true(lazy.outputCharsAtMost >= ref.outputChars);
  t.is(lazy.outputChars, ref.outputChars);
});

test('past DEFERRED_MAX_CHARS a long stream counts each chunk as it arrives and keeps none', (t) => {
  const lazy = new ChatCompletionsUsageAccumulator();
  const ref = new EagerReference();
  const parse = JSON.parse;
  let parsed = 0;
  let i = 0;
  JSON.parse = ((...args: Parameters<typeof JSON.parse>) => (parsed++, parse(...args))) as typeof JSON.parse;
  try {
    let held = 0;
    // A short answer's worth (under the limit): nothing parsed.
    for (; held + 200 <= DEFERRED_MAX_CHARS; i++) {
      const e = chunk({ content: `token ${i} ` });
      held += e.length;
      lazy.push({ data: e });
    }
    t.is(parsed, 0);
    // Over the limit: the held chunks are counted at once, then each new one on arrival.
    for (let k = 0; k < 5; k++, i++) lazy.push({ data: chunk({ content: `token ${i} ` }) });
    const atLimit = parsed;
    t.true(atLimit >= i - 5, `the held chunks were counted (${atLimit} of ${i})`);
    for (let k = 0; k < 100; k++, i++) lazy.push({ data: chunk({ content: `token ${i} ` }) });
    t.is(parsed, atLimit + 100, 'one parse a chunk once the stream is long');
  } finally {
    JSON.parse = parse;
  }
  for (let j = 0; j < i; j++) ref.push(chunk({ content: `token ${j} ` }));
  t.is(lazy.outputChars, ref.outputChars);
  t.is(lazy.outputCharsAtMost, ref.outputChars, 'nothing held: the bound is the count');
});

// Chunks built from pieces that look like the markers, serialised in several ways.
const text = fc.oneof(
  fc.string(),
  fc.constantFrom('usage', '"usage":', 'usage":null', 'finish_reason', '"finish_reason":"stop"', '\\', '\\u0075', '"', 'é', '😀', '[DONE]'),
  fc.array(fc.constantFrom('usage', '":null', '"', '\\', 'finish_reason', 'x', ' '), { maxLength: 6 }).map((a) => a.join('')),
);
const usageValue = fc.oneof(fc.constant(null), fc.constant(undefined), fc.record({ prompt_tokens: fc.nat(50), completion_tokens: fc.nat(50), total_tokens: fc.nat(120) }, { requiredKeys: [] }));
const finish = fc.constantFrom(null, undefined, 'stop', 'length', '', false, 0);
const choice = fc.record({
  index: fc.nat(2),
  delta: fc.option(fc.record({
    content: fc.option(text, { nil: undefined }),
    reasoning_content: fc.option(text, { nil: undefined }),
    refusal: fc.option(text, { nil: null }),
    tool_calls: fc.option(fc.array(fc.record({ function: fc.record({ name: text, arguments: text }, { requiredKeys: [] }) }), { maxLength: 2 }), { nil: undefined }),
  }, { requiredKeys: [] }), { nil: undefined }),
  finish_reason: finish,
}, { requiredKeys: [] });
const chunkObject = fc.record({ id: fc.constant('c'), choices: fc.array(choice, { maxLength: 2 }), usage: usageValue }, { requiredKeys: ['choices'] });
/** How an upstream may write it: compact, spaced, or with the marker keys spelled as \u escapes. */
const serialise = (o: unknown, how: number) => {
  const s = JSON.stringify(o);
  if (how === 1) return JSON.stringify(o, null, 1);
  if (how === 2) return s.replaceAll('"usage":', '"\\u0075sage":').replaceAll('"finish_reason":', '"finish\\u005freason":');
  if (how === 3) return s.replaceAll('":', '" : ');
  return s;
};
const event = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(chunkObject, fc.nat(3)).map(([o, how]) => serialise(o, how)) },
  { weight: 1, arbitrary: fc.constantFrom('[DONE]', ' [DONE]', 'garbage', '{"choices":[{"delta":{"content":"x"}', 'null', '[]') },
);

test('any stream: the same usage, completion and characters as parsing every chunk', (t) => {
  fc.assert(
    fc.property(fc.array(event, { maxLength: 12 }), (events) => {
      const { lazy, ref } = both(events);
      const bound = lazy.outputCharsAtMost;
      return JSON.stringify(lazy.usage) === JSON.stringify(ref.usage) && lazy.completed === ref.completed && bound >= ref.outputChars && lazy.outputChars === ref.outputChars;
    }),
    { numRuns: 3000 },
  );
  t.pass();
});

test('any long stream: the same usage, completion and characters as parsing every chunk', (t) => {
  fc.assert(
    fc.property(fc.array(event, { minLength: 1, maxLength: 6 }), fc.array(event, { maxLength: 12 }), (seed, tail) => {
      const { lazy, ref } = both(pastTheLimit(seed.map((data) => ({ data })), tail.map((data) => ({ data }))).map((e) => e.data));
      const bound = lazy.outputCharsAtMost;
      return JSON.stringify(lazy.usage) === JSON.stringify(ref.usage) && lazy.completed === ref.completed && bound >= ref.outputChars && lazy.outputChars === ref.outputChars;
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('billing with the bound gives what billing with the exact count gives', (t) => {
  const tokenUsage = fc.option(fc.record({ inputTokens: fc.nat(100), outputTokens: fc.nat(100), cachedTokens: fc.constant(0), cacheWriteTokens: fc.constant(0), serverToolCalls: fc.constant(0) }), { nil: null });
  fc.assert(
    fc.property(tokenUsage, fc.nat(3000), fc.nat(3000), fc.nat(400), fc.boolean(), (reported, chars, slack, promptBytes, completed) => {
      let reads = 0;
      const lazy = usageToBill({ reported, get outputChars() { reads++; return chars; }, outputCharsAtMost: chars + slack, promptBytes, completed });
      const exact = usageToBill({ reported, outputChars: chars, promptBytes, completed });
      return JSON.stringify(lazy) === JSON.stringify(exact) && reads <= 1;
    }),
    { numRuns: 5000 },
  );
  // The usual turn does not count at all.
  let reads = 0;
  usageToBill({ reported: { inputTokens: 10, outputTokens: 16, cachedTokens: 0, cacheWriteTokens: 0, serverToolCalls: 0 }, get outputChars() { reads++; return 60; }, outputCharsAtMost: 200, promptBytes: 40, completed: true });
  t.is(reads, 0);
});

test('a usual stream is billed without parsing its content chunks: the envelope does not count toward the bound', (t) => {
  // An OpenAI-shaped stream of 16 one-token chunks: each chunk's JSON is ~150 characters, its text 3-5.
  const envelope = (delta: unknown, finish: string | null) =>
    JSON.stringify({ id: 'chatcmpl-Bx7f9aQ2kLmN0pRsTuVwXyZ', object: 'chat.completion.chunk', created: 1764300000, model: 'gpt-5.1-2025-11-13', system_fingerprint: 'fp_5f2a9c', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null });
  const words = Array.from({ length: 16 }, (_, i) => ` w${i}`);
  const events = [envelope({ role: 'assistant', content: '', refusal: null }, null), ...words.map((w) => envelope({ content: w }, null)), envelope({}, 'stop'),
    JSON.stringify({ id: 'chatcmpl-Bx7f9aQ2kLmN0pRsTuVwXyZ', object: 'chat.completion.chunk', created: 1764300000, model: 'gpt-5.1-2025-11-13', choices: [], usage: { prompt_tokens: 12, completion_tokens: 16, total_tokens: 28 } }), '[DONE]'];
  const lazy = new ChatCompletionsUsageAccumulator();
  for (const e of events) lazy.push({ data: e });
  let reads = 0;
  const billed = usageToBill({
    reported: { inputTokens: 12, outputTokens: 16, cachedTokens: 0, cacheWriteTokens: 0, serverToolCalls: 0 },
    get outputChars() {
      reads++;
      return lazy.outputChars;
    },
    outputCharsAtMost: lazy.outputCharsAtMost,
    promptBytes: 60,
    completed: lazy.completed,
  });
  t.is(reads, 0, 'the bound settled the bill');
  t.is(lazy.outputCharsAtMost, words.join('').length);
  t.false(billed.estimated);
});

/** The characters of every string held by a member of one of `names`, at any depth (what the bound must cover). */
function valueChars(v: unknown, names: Set<string>): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + valueChars(x, names), 0);
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  for (const [k, x] of Object.entries(v)) n += (names.has(k) && typeof x === 'string' ? x.length : 0) + valueChars(x, names);
  return n;
}

test('stringValueChars is never below the characters of the named members, however the JSON is spaced', (t) => {
  const names = ['content', 'name', 'arguments', 'text'];
  const quoted = memberNames(...names);
  const key = fc.constantFrom(...names, 'reasoning_content', 'x_content', 'content_x', 'name"', 'text\\', 'id');
  const str = fc.oneof(fc.string(), fc.constantFrom('"content":"', '\\', '\\"', '"', '"text": "', '\\u0041', 'é😀'));
  const value = fc.letrec((tie) => ({
    v: fc.oneof({ depthSize: 'small' }, str, fc.constant(null), fc.integer(), fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(key, tie('v'), { maxKeys: 4 })),
  })).v;
  fc.assert(
    fc.property(value, fc.constantFrom(0, 1, 2, 3), (v, how) => {
      const text = how === 0 ? JSON.stringify(v) : how === 3 ? JSON.stringify(v).replaceAll('":', '" :\t') : JSON.stringify(v, null, how);
      return stringValueChars(text, quoted) >= valueChars(v, new Set(names));
    }),
    { numRuns: 5000 },
  );
  t.pass();
});
