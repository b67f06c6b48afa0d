import test from 'ava';
import { WORDS, argumentPieces, hash32, outputBudget, outputTokens, textChars, textOf, tokensForChars, toolArguments } from '../../dev/simulator/text';

test('FNV-1a matches the published test vectors', (t) => {
  t.is(hash32(''), 0x811c9dc5);
  t.is(hash32('a'), 0xe40c292c);
  t.is(hash32('foobar'), 0xbf9cf968);
});

test('output tokens: deterministic words, leading spaces after the first', (t) => {
  const a = outputTokens('seed', 24);
  t.deepEqual(a, outputTokens('seed', 24));
  t.notDeepEqual(a, outputTokens('seed2', 24));
  t.false(a[0].startsWith(' '));
  t.true(a.slice(1).every((w) => w.startsWith(' ') && WORDS.includes(w.slice(1))));
  t.deepEqual(outputTokens('seed', 5), a.slice(0, 5));
  t.deepEqual(outputTokens('seed', 0), []);
});

test('budget: min(cap, 24), capped only below 24', (t) => {
  t.deepEqual(outputBudget(undefined), { count: 24, capped: false });
  t.deepEqual(outputBudget(5), { count: 5, capped: true });
  t.deepEqual(outputBudget(24), { count: 24, capped: false });
  t.deepEqual(outputBudget(4096), { count: 24, capped: false });
  t.deepEqual(outputBudget('7'), { count: 24, capped: false });
});

test('prompt tokens: ceil(chars / 4), at least 1, over all message text', (t) => {
  t.is(tokensForChars(0), 1);
  t.is(tokensForChars(4), 1);
  t.is(tokensForChars(5), 2);
  const messages = [
    { role: 'system', content: 'abcd' },
    { role: 'user', content: [{ type: 'text', text: 'efgh' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'ij' },
  ];
  t.is(textChars(messages), 10);
  t.is(textOf(messages[1].content), 'efgh');
  t.is(textChars([{ role: 'user', parts: [{ text: 'abc' }, { functionResponse: { name: 'f', response: { output: 'de' } } }] }]), 5);
});

test('tool arguments follow the schema: required keys, enums, types', (t) => {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] }, days: { type: 'integer' }, ok: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['city', 'unit', 'days', 'ok', 'tags'],
  };
  const args = toolArguments(schema, 's');
  t.deepEqual(args, toolArguments(schema, 's'));
  t.is(typeof args.city, 'string');
  t.true(['c', 'f'].includes(args.unit as string));
  t.true(Number.isInteger(args.days));
  t.is(typeof args.ok, 'boolean');
  t.true(Array.isArray(args.tags));
  t.deepEqual(Object.keys(toolArguments({ type: 'OBJECT', properties: { a: { type: 'STRING' }, b: { type: 'NUMBER' } } }, 's')), ['a', 'b']);
  t.deepEqual(toolArguments(undefined, 's'), {});
  t.deepEqual(argumentPieces('{"city":"x"}'), ['{"ci', 'ty":', '"x"}']);
});
