import test from 'ava';
import { orderByAffinity } from '../../gateway/chat/channel-affinity';
import { contextMessage } from '../../capabilities/agents/context';
import { latestUserText } from '../../gateway/chat/agent-prelude';
import { effectiveModelId, nextState, whitelistAllows } from '../../domain/agents';
import type { Channel } from '../../domain/catalogue';
import type { Page } from '../../domain/knowledge/page';

const ch = (id: string, priority = 0, weight = 1): Channel =>
  ({ id, kind: 'native', upstream: 'chat-completions', base_url: `http://x/${id}`, priority, weight, web_search: false }) as Channel;

test('affinity: a key always gets the same order; the lower tiers stay behind the first', (t) => {
  const channels = [ch('a'), ch('b'), ch('c'), ch('z', 1)];
  const first = orderByAffinity(channels, 'session-1');
  for (let i = 0; i < 50; i++) t.deepEqual(orderByAffinity(channels, 'session-1'), first);
  t.is(first[3].id, 'z');
  const picks = new Set(Array.from({ length: 60 }, (_, i) => orderByAffinity(channels, `s${i}`)[0].id));
  t.deepEqual([...picks].sort(), ['a', 'b', 'c']);
});

test('affinity: without a key, the first pick follows the weights', (t) => {
  const channels = [ch('heavy', 0, 3), ch('light', 0, 1)];
  let heavy = 0;
  for (let i = 0; i < 4000; i++) if (orderByAffinity(channels, null)[0].id === 'heavy') heavy++;
  t.true(heavy > 2800 && heavy < 3200, `${heavy} of 4000`);
  // keyed picks follow the weights too
  let keyed = 0;
  for (let i = 0; i < 4000; i++) if (orderByAffinity(channels, `k${i}`)[0].id === 'heavy') keyed++;
  t.true(keyed > 2800 && keyed < 3200, `${keyed} of 4000`);
  // a single channel per tier keeps the ladder
  t.deepEqual(orderByAffinity([ch('a', 0), ch('b', 1), ch('c', 2)], null).map((c) => c.id), ['a', 'b', 'c']);
});

const page = (id: string, body: string, title = `Title ${id}`): Page => ({
  id, kb_id: 'k', title, summary: 's', tags: [], aliases: [], links: [], body, confidence: 1, needs_review: false,
  source: { r2_key: '', filename: '', locator: '', compiled_at: '', model: '' }, outgoing_links: [],
});

test('context: pages in rank order within the budget, cut on a character boundary, slivers left out', (t) => {
  for (const budget of [50, 100, 300, 1000]) {
    const pages = Array.from({ length: 10 }, (_, i) => page(`p${i}`, '日本語のテキスト'.repeat(30 + i * 7)));
    const c = contextMessage(pages, budget);
    if (!c) continue;
    t.true(Buffer.byteLength(c.text) <= budget * 4, `budget ${budget}: ${Buffer.byteLength(c.text)}`);
    t.false(c.text.includes('\uFFFD'));
    t.deepEqual(c.pageIds, pages.slice(0, c.pageIds.length).map((p) => p.id));
  }
  t.is(contextMessage([page('p', 'x'.repeat(10_000))], 10), null);
  const small = contextMessage([page('a', 'alpha'), page('b', 'beta')], 2000)!;
  t.deepEqual(small.pageIds, ['a', 'b']);
  t.regex(small.text, /\[page a\] Title a\ns\nalpha/);
});

test('the latest user message is the query; text parts joined', (t) => {
  t.is(latestUserText([{ role: 'user', content: 'first' }, { role: 'assistant', content: 'x' }, { role: 'user', content: ' second ' }]), 'second');
  t.is(latestUserText([{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'u' } }, { type: 'text', text: 'b' }] }]), 'a\nb');
  t.is(latestUserText([{ role: 'system', content: 'only system' }]), '');
});

test('model fallback, whitelist and key transitions', (t) => {
  t.is(effectiveModelId({ model_id: 'a' }, { default_model: 'b' }, 'c'), 'a');
  t.is(effectiveModelId({ model_id: null }, { default_model: 'b' }, 'c'), 'b');
  t.is(effectiveModelId({ model_id: null }, { default_model: null }, 'c'), 'c');
  t.true(whitelistAllows(null, { id: 'm', aliases: [] }));
  t.true(whitelistAllows(['old'], { id: 'm', aliases: ['old'] }));
  t.false(whitelistAllows([], { id: 'm', aliases: [] }));
  t.is(nextState('requested', 'approve'), 'issued');
  t.is(nextState('requested', 'reject'), 'rejected');
  t.is(nextState('issued', 'revoke'), 'revoked');
  t.is(nextState('revoked', 'approve'), null);
  t.is(nextState('issued', 'approve'), null);
  t.is(nextState('rejected', 'approve'), null);
});
