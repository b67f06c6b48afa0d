import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startKit, type Kit } from './images-kit';
import type { TaskDocument } from '../../domain/media/task';

/** GET /v1/images/generations (spec 2 sections 2.2 and 4.2). */
let kit: Kit;
test.before(async () => {
  kit = await startKit();
});
test.after.always(async () => kit?.gw.close());

const GEN = '/v1/images/generations';
type Item = Record<string, any>;
type Page = { object: string; data: Item[]; next_cursor: string | null };

async function list(key: string, query = ''): Promise<Page> {
  const r = await kit.get(key, `${GEN}${query}`);
  if (r.status !== 200) throw new Error(`${r.status}: ${await r.text()}`);
  return (await r.json()) as Page;
}

/** Every page of a listing, following next_cursor. */
async function allPages(key: string, query: string): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const sep = query ? '&' : '?';
    pages.push(await list(key, `${query}${cursor ? `${sep}cursor=${cursor}` : ''}`));
    cursor = pages[pages.length - 1].next_cursor;
  } while (cursor && pages.length < 50);
  return pages;
}

/** A finished image task written straight into Mongo, to test the listing on chosen submission times. */
async function seed(accountId: string, at: Date, over: Partial<TaskDocument> = {}): Promise<string> {
  const id = `task_${randomBytes(12).toString('hex')}`;
  await kit.gw.deps.db.Task.create({
    _id: id, account_id: accountId, key_id: 'k', key_name: 'k', key_prefix: 'sk-x', kind: 'image', endpoint: 'generations',
    model: 'gpt-image-1', state: 'succeeded', progress: null, input: {}, quote: { unitType: 'image', unitNano: 40_000_000, fixedNano: 0, reservedUnits: 1 },
    reserved_nano: 40_000_000, cost_nano: 40_000_000, unit_count: 1, upstream: null,
    result: { urls: ['https://x/a.png'], expires_at: null, links_expired: false, extra: null }, final_body: '{}', final_status: 200,
    error_code: null, error_message: null, request_id: `req_${id}`, created_at: at, started_at: at, completed_at: at, updated_at: at, ...over,
  } satisfies TaskDocument);
  return id;
}

test.serial('items carry the 2.2 fields; status filters incl. in_flight and comma lists; result only when succeeded', async (t) => {
  const a = await kit.account();
  // succeeded (sync), failed (upstream 400 passed through), in flight (hangs), and an edit
  const ok = await kit.post(a.key, GEN, { model: 'gpt-image-1', prompt: 'list ok', n: 2 });
  const okTrace = ok.headers.get('x-gateway-trace');
  t.is(ok.status, 200);
  await kit.fault('openai-images-a', { type: 'submit_status', status: 400 }, 1);
  t.is((await kit.post(a.key, GEN, { model: 'gpt-image-1', prompt: 'list bad' })).status, 400);
  await kit.fault('image-tasks-a', { type: 'hang' }, 1);
  const hung = (await (await kit.post(a.key, GEN, { model: 'flux-kontext-pro', prompt: 'list hang', async: true })).json()) as { id: string };
  t.is((await kit.post(a.key, '/v1/images/edits', { model: 'gpt-image-1', prompt: 'list edit', image: 'https://example.com/a.png' })).status, 200);

  const all = await list(a.key);
  t.is(all.object, 'list');
  t.is(all.data.length, 4);
  t.is(all.next_cursor, null);
  t.deepEqual(all.data.map((x) => x.created_at), [...all.data.map((x) => x.created_at)].sort((x, y) => y - x)); // newest first
  const succeeded = all.data.find((x) => x.request_id === okTrace)!;
  t.deepEqual(Object.keys(succeeded).sort(), [
    'completed_at', 'cost', 'created_at', 'endpoint', 'error_code', 'id', 'model', 'request_id', 'result', 'started_at', 'status', 'unit_count',
  ]);
  t.like(succeeded, { status: 'succeeded', model: 'gpt-image-1', endpoint: 'generations', unit_count: 2, cost: '0.08', error_code: null });
  t.is(succeeded.result.urls.length, 2);
  t.true(succeeded.result.expires_at > Date.now() / 1000);
  for (const k of ['created_at', 'started_at', 'completed_at']) t.true(Number.isInteger(succeeded[k]), k);

  const failed = await list(a.key, '?status=failed');
  t.is(failed.data.length, 1);
  t.like(failed.data[0], { status: 'failed', cost: '0.00', unit_count: 0, error_code: 'upstream_400' });
  t.false('result' in failed.data[0]);

  const inFlight = await list(a.key, '?status=in_flight');
  t.deepEqual(inFlight.data.map((x) => x.id), [hung.id]);
  t.true(['queued', 'running'].includes(inFlight.data[0].status));
  t.false('result' in inFlight.data[0]);
  // Each in-flight status alone, together (the task may move from queued to running between two reads).
  t.deepEqual((await list(a.key, '?status=queued,running')).data.map((x) => x.id), [hung.id]);
  const byOne = [...(await list(a.key, '?status=queued')).data, ...(await list(a.key, '?status=running')).data];
  t.true(byOne.length <= 2 && byOne.length >= 1 && byOne.every((x) => x.id === hung.id), JSON.stringify(byOne));

  const two = await list(a.key, '?status=succeeded,failed');
  t.is(two.data.length, 3);
  t.deepEqual((await list(a.key, '?status=succeeded')).data.map((x) => x.endpoint).sort(), ['edits', 'generations']);
  t.is((await list(a.key, '?status=all')).data.length, 4);

  // others' tasks are not listed
  const b = await kit.account();
  t.is((await list(b.key)).data.length, 0);
});

test('from/to in Unix seconds, RFC 3339 and YYYY-MM-DD; a `to` date excludes that day', async (t) => {
  const a = await kit.account();
  const ids: Record<string, string> = {};
  for (const at of ['2026-10-15T23:59:59Z', '2026-10-16T00:00:00Z', '2026-10-16T12:00:00Z', '2026-10-17T00:00:00Z', '2026-10-18T08:30:00Z']) {
    ids[at] = await seed(a.id, new Date(at));
  }
  const at = (...keys: string[]) => keys.map((k) => ids[k]);
  const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);
  const q = async (query: string) => (await list(a.key, query)).data.map((x) => x.id);

  t.deepEqual(await q('?from=2026-10-16&to=2026-10-17'), at('2026-10-16T12:00:00Z', '2026-10-16T00:00:00Z'));
  t.deepEqual(await q('?to=2026-10-16'), at('2026-10-15T23:59:59Z'));
  t.deepEqual(await q('?from=2026-10-17'), at('2026-10-18T08:30:00Z', '2026-10-17T00:00:00Z'));
  t.deepEqual(await q(`?from=${unix('2026-10-16T00:00:00Z')}&to=${unix('2026-10-16T12:00:00Z')}`), at('2026-10-16T00:00:00Z'));
  t.deepEqual(await q(`?from=${unix('2026-10-16T12:00:00Z')}`), at('2026-10-18T08:30:00Z', '2026-10-17T00:00:00Z', '2026-10-16T12:00:00Z'));
  t.deepEqual(await q('?from=2026-10-16T06:00:00Z&to=2026-10-17T00:00:01Z'), at('2026-10-17T00:00:00Z', '2026-10-16T12:00:00Z'));
  t.deepEqual(await q(`?from=${encodeURIComponent('2026-10-16T14:00:00+02:00')}&to=${encodeURIComponent('2026-10-17T01:00:00+01:00')}`), at('2026-10-16T12:00:00Z'));
  for (const bad of ['?from=yesterday', '?to=16/10/2026', '?from=2026-13-45']) {
    const r = await kit.get(a.key, `${GEN}${bad}`);
    t.is(r.status, 400, bad);
    t.is(((await r.json()) as any).error.code, 'invalid_request');
  }
});

test('limit: default 30, 1 to 100, others 400; cursor paging has no duplicates or gaps, ties included', async (t) => {
  const a = await kit.account();
  const base = Date.parse('2026-11-01T00:00:00Z');
  const ids: string[] = [];
  // 40 tasks: every four share one timestamp, so pages cut through ties
  for (let i = 0; i < 40; i++) ids.push(await seed(a.id, new Date(base + Math.floor(i / 4) * 1000)));
  const first = await list(a.key);
  t.is(first.data.length, 30);
  t.truthy(first.next_cursor);
  for (const limit of [1, 100]) t.is((await list(a.key, `?limit=${limit}`)).data.length, Math.min(limit, 40));
  for (const bad of ['0', '101', '-1', 'x', '2.5']) {
    const r = await kit.get(a.key, `${GEN}?limit=${bad}`);
    t.is(r.status, 400, bad);
    t.is(((await r.json()) as any).error.param, 'limit');
  }
  for (const size of [3, 7, 30]) {
    const pages = await allPages(a.key, `?limit=${size}`);
    t.is(pages.length, Math.ceil(40 / size), `limit ${size}`);
    t.is(pages[pages.length - 1].next_cursor, null);
    const seen = pages.flatMap((p) => p.data.map((x) => x.id));
    t.is(seen.length, 40);
    t.is(new Set(seen).size, 40);
    const times = pages.flatMap((p) => p.data.map((x) => x.created_at));
    t.deepEqual(times, [...times].sort((x, y) => y - x));
  }
  // the cursor combines with filters
  const filtered = await allPages(a.key, `?limit=3&from=${Math.floor(base / 1000) + 5}`);
  t.is(filtered.flatMap((p) => p.data).length, 20);
  const bad = await kit.get(a.key, `${GEN}?cursor=not-a-cursor`);
  t.is(bad.status, 400);
  t.is(((await bad.json()) as any).error.param, 'cursor');
});

test('an unknown status is 400 naming the field', async (t) => {
  const a = await kit.account();
  const r = await kit.get(a.key, `${GEN}?status=expired`);
  t.is(r.status, 400);
  t.is(((await r.json()) as any).error.param, 'status');
});

test('a task closed without a body (its workflow never started) polls as a final error, not 202 forever', async (t) => {
  const a = await kit.account();
  const id = await seed(a.id, new Date(), {
    state: 'failed', cost_nano: 0, unit_count: 0, result: null, final_body: null, final_status: null,
    error_code: 'not_started', error_message: 'the task could not be started',
  });
  const r = await kit.get(a.key, `${GEN}/${id}`);
  t.is(r.status, 502);
  t.deepEqual(await r.json(), { error: { code: 'not_started', message: 'the task could not be started', param: null, type: 'api_error' } });
  const item = (await list(a.key)).data[0];
  t.like(item, { id, status: 'failed', cost: '0.00', error_code: 'not_started' });
});
