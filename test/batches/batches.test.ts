import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type TestGateway } from '../helpers/stack';
import { bundleWorkflows } from '../../dev/scripts/bundle-workflows';
import { parseCredits } from '../../domain/money';
import { batchModels } from '../../capabilities/batches/store';
import { BATCH_LIMITS } from '../../capabilities/batches/limits';
import { scratchDir } from '../../dev/scripts/lib/scratch';

/**
 * Issue 26 step 2: OpenAI Files + Batches and Anthropic Message Batches on one durable engine, driven
 * with the official SDKs. Lines run through the live chat pipeline (a line is a live call), are billed
 * on their usage with the catalogue's batch_multiplier, and are answered and charged exactly once, also
 * when the worker running them is SIGKILLed mid-batch.
 */

let gw: TestGateway;
let bundle: string;
let catalogueFile: string;
const workers: ChildProcess[] = [];

test.before(async () => {
  bundle = process.env.WORKFLOW_BUNDLE ?? (await bundleWorkflows(`.data/batch-test-bundle-${process.pid}.js`));
  // The shipped catalogue has no batch discount (1.0); this one halves the token prices of batch lines.
  const catalogue = JSON.parse(fs.readFileSync('data/catalogue.json', 'utf8'));
  catalogue.pricing_rules.batch_multiplier = '0.5';
  catalogueFile = path.join(scratchDir('batch-catalogue'), 'catalogue.json');
  fs.writeFileSync(catalogueFile, JSON.stringify(catalogue));
  gw = await startGateway({ CATALOGUE_FILE: catalogueFile, BATCH_LINE_CONCURRENCY: '16' }, { simulator: true });
});
test.after.always(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await gw?.close();
});

function startWorker(): ChildProcess {
  const c = gw.config;
  const env = {
    WORKFLOW_BUNDLE: bundle,
    ...process.env,
    MONGO_URL: c.MONGO_URL, REDIS_URL: c.REDIS_URL, REDIS_PREFIX: c.REDIS_PREFIX, TEMPORAL_ADDRESS: c.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: c.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: c.ADMIN_TOKEN, KEY_ENCRYPTION_KEY: c.KEY_ENCRYPTION_KEY,
    SIMULATOR_URL: c.SIMULATOR_URL, GATEWAY_INTERNAL_URL: gw.url, BATCH_LINE_CONCURRENCY: '16', CATALOGUE_FILE: catalogueFile, LOG_LEVEL: 'warn',
  };
  const w = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  workers.push(w);
  return w;
}

const exited = (p: ChildProcess) => new Promise<void>((resolve) => (p.exitCode !== null || p.signalCode !== null ? resolve() : p.once('exit', () => resolve())));

async function until<T>(what: string, f: () => Promise<T | undefined | null | false>, timeoutMs = 240_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function account(topUp = '1000') {
  const a = await gw.newAccount();
  await gw.admin('POST', `/accounts/${a.id}/topups`, { amount_usd: topUp });
  const k = await gw.newKey(a.id);
  return { id: a.id, key: k.key };
}

/** The account's chat charges in the ledger, once the journal is drained. */
async function charges(accountId: string) {
  await gw.deps.wallet.journal.flush();
  return gw.deps.db.Ledger.find({ account_id: accountId, kind: 'charge' }).lean();
}

const jsonl = (n: number, endpoint = '/v1/chat/completions', prefix = 'line') =>
  Array.from({ length: n }, (_, i) => JSON.stringify({
    custom_id: `${prefix}-${i}`, method: 'POST', url: endpoint,
    body: endpoint === '/v1/responses' ? { model: 'gpt-5.1', input: `question ${i}`, max_output_tokens: 8 } : { model: 'gpt-5.1', max_tokens: 8, messages: [{ role: 'user', content: `question ${i}` }] },
  })).join('\n');

test.serial('openai SDK: files.create, batches.create / retrieve / list, files.content; lines billed once with the batch multiplier', async (t) => {
  t.timeout(300_000);
  const worker = startWorker();
  try {
    const a = await account();
    const openai = new OpenAI({ apiKey: a.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl(20)), 'in.jsonl'), purpose: 'batch' });
    t.is(file.object, 'file');
    t.is(file.purpose, 'batch');
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { run: 'sdk' } });
    t.is(batch.request_counts?.total, 20);
    const done = await until('the batch', async () => {
      const b = await openai.batches.retrieve(batch.id);
      return b.status === 'completed' && b;
    });
    t.deepEqual(done.request_counts, { total: 20, completed: 20, failed: 0 });
    t.falsy(done.error_file_id);
    t.truthy((await openai.batches.list()).data.find((b) => b.id === batch.id));
    const text = await (await openai.files.content(done.output_file_id!)).text();
    const out = text.trim().split('\n').map((l) => JSON.parse(l));
    t.is(out.length, 20);
    // The output file's size was stored at the batch's end: its metadata reads it and it matches the content.
    const stored = await batchModels(gw.deps.db.conn).File.findById(done.output_file_id!).lean();
    t.is(stored?.bytes, Buffer.byteLength(text));
    t.is((await openai.files.retrieve(done.output_file_id!)).bytes, Buffer.byteLength(text));
    t.deepEqual(out.map((o) => o.custom_id).sort(), Array.from({ length: 20 }, (_, i) => `line-${i}`).sort());
    let sum = 0;
    for (const o of out) {
      t.is(o.response.status_code, 200);
      t.is(o.error, null);
      t.is(o.response.body.object, 'chat.completion');
      t.is(o.response.body.usage.cost_details.multipliers.batch, '0.5', 'the batch discount is shown');
      sum += parseCredits(o.response.body.usage.cost);
    }
    const ledger = await charges(a.id);
    t.is(ledger.length, 20, 'one charge per line');
    t.is(ledger.reduce((s, l) => s - l.amount_nano, 0), sum, 'ledger = sum of the lines\' usage.cost');
    // The same line as a live call costs twice as much (the multiplier is 0.5 and the prices are per token).
    const live = await openai.chat.completions.create({ model: 'gpt-5.1', max_tokens: 8, messages: [{ role: 'user', content: 'question 0' }] });
    t.is((live.usage as any).cost_details.multipliers.batch, '1');
    const deleted = await openai.files.delete(file.id);
    t.true(deleted.deleted);
  } finally {
    worker.kill('SIGKILL');
    await exited(worker);
  }
});

test.serial('a 1,000-line batch with its worker SIGKILLed mid-run: every line answered once, charged once, ledger = sum of usage.cost', async (t) => {
  t.timeout(600_000);
  const a = await account('10000');
  const openai = new OpenAI({ apiKey: a.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  // Slow enough that the kill lands mid-run.
  await gw.control('POST', '/latency', { ttft_ms: 60, token_delay_ms: 0 });
  const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl(1000)), 'big.jsonl'), purpose: 'batch' });
  const first = startWorker();
  const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  const store = batchModels(gw.deps.db.conn);
  await until('lines to run', async () => (await store.Line.countDocuments({ batch_id: batch.id })) >= 150);
  first.kill('SIGKILL');
  await exited(first);
  const before = await store.Line.countDocuments({ batch_id: batch.id });
  t.true(before < 1000, `the kill landed mid-run (${before} lines done)`);
  const second = startWorker();
  try {
    const done = await until('the batch', async () => {
      const b = await openai.batches.retrieve(batch.id);
      return (b.status === 'completed' || b.status === 'failed') && b;
    }, 480_000);
    t.is(done.status, 'completed');
    t.deepEqual(done.request_counts, { total: 1000, completed: 1000, failed: 0 });
    const out = (await (await openai.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    t.is(out.length, 1000, 'every line answered');
    t.is(new Set(out.map((o) => o.custom_id)).size, 1000, 'each line once');
    const sum = out.reduce((s, o) => s + parseCredits(o.response.body.usage.cost), 0);
    const ledger = await charges(a.id);
    t.is(ledger.length, 1000, 'each line charged once');
    t.is(new Set(ledger.map((l) => l._id)).size, 1000);
    t.is(ledger.reduce((s, l) => s - l.amount_nano, 0), sum, 'ledger = sum of the lines\' usage.cost');
    t.is((await gw.deps.wallet.ledgerTotals(a.id)).balanceNano, await gw.deps.wallet.balance(a.id), 'the projection agrees with the ledger');
  } finally {
    await gw.control('POST', '/latency', { ttft_ms: 0, token_delay_ms: 0 });
    second.kill('SIGKILL');
    await exited(second);
  }
});

test.serial('anthropic SDK: messages.batches create / retrieve / results / cancel on the same engine', async (t) => {
  t.timeout(300_000);
  const worker = startWorker();
  try {
    const a = await account();
    const anthropic = new Anthropic({ apiKey: a.key, baseURL: gw.url, maxRetries: 0 });
    const requests = [
      ...Array.from({ length: 4 }, (_, i) => ({ custom_id: `ok-${i}`, params: { model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user' as const, content: `hi ${i}` }] } })),
      { custom_id: 'bad-model', params: { model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user' as const, content: 'x' }] } },
    ];
    const created = await anthropic.messages.batches.create({ requests });
    t.is(created.type, 'message_batch');
    t.is(created.processing_status, 'in_progress');
    // Its requests are kept as the batch's input, never as one of the account's files.
    const files = await fetch(`${gw.url}/v1/files`, { headers: { authorization: `Bearer ${a.key}` } }).then((r) => r.json()) as { data: unknown[] };
    t.deepEqual(files.data, []);
    const inputId = (await gw.deps.db.conn.collection('batches').findOne({ _id: created.id as never }))?.input_file_id as string;
    t.truthy(inputId);
    t.is((await fetch(`${gw.url}/v1/files/${inputId}`, { headers: { authorization: `Bearer ${a.key}` } })).status, 404);
    const ended = await until('the message batch', async () => {
      const b = await anthropic.messages.batches.retrieve(created.id);
      return b.processing_status === 'ended' && b;
    });
    t.is(ended.request_counts.succeeded, 4);
    t.is(ended.request_counts.errored, 1);
    const results: any[] = [];
    for await (const r of await anthropic.messages.batches.results(created.id)) results.push(r);
    t.is(results.length, 5);
    const ok = results.filter((r) => r.result.type === 'succeeded');
    t.is(ok.length, 4);
    t.is(results.find((r) => r.custom_id === 'bad-model').result.type, 'errored');
    const sum = ok.reduce((s, r) => s + parseCredits(r.result.message.usage.cost), 0);
    const ledger = await charges(a.id);
    t.is(ledger.length, 4);
    t.is(ledger.reduce((s, l) => s - l.amount_nano, 0), sum);

    // Cancel: new lines stop, what finished is in the results and billed.
    await gw.control('POST', '/latency', { ttft_ms: 200, token_delay_ms: 0 });
    const many = await anthropic.messages.batches.create({
      requests: Array.from({ length: 300 }, (_, i) => ({ custom_id: `c-${i}`, params: { model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user' as const, content: `cancel ${i}` }] } })),
    });
    await until('some lines', async () => (await batchModels(gw.deps.db.conn).Line.countDocuments({ batch_id: many.id })) >= 10);
    const cancelling = await anthropic.messages.batches.cancel(many.id);
    t.true(['canceling', 'ended'].includes(cancelling.processing_status));
    const stopped = await until('the cancel', async () => {
      const b = await anthropic.messages.batches.retrieve(many.id);
      return b.processing_status === 'ended' && b;
    });
    t.true(stopped.request_counts.canceled > 0, 'lines not started are canceled');
    t.is(stopped.request_counts.succeeded + stopped.request_counts.canceled + stopped.request_counts.errored, 300);
    const all: any[] = [];
    for await (const r of await anthropic.messages.batches.results(many.id)) all.push(r);
    t.is(all.length, 300);
    const billed = all.filter((r) => r.result.type === 'succeeded');
    t.is(billed.length, stopped.request_counts.succeeded);
    const ledger2 = (await charges(a.id)).filter((l) => String(l._id).startsWith(many.id));
    t.is(ledger2.length, billed.length, 'every finished line billed, no other');
    t.is(ledger2.reduce((s, l) => s - l.amount_nano, 0), billed.reduce((s, r) => s + parseCredits(r.result.message.usage.cost), 0));
  } finally {
    await gw.control('POST', '/latency', { ttft_ms: 0, token_delay_ms: 0 });
    worker.kill('SIGKILL');
    await exited(worker);
  }
});

test.serial('limits and bad input are 400s that name the problem', async (t) => {
  const a = await account();
  const upload = (content: string, purpose = 'batch') => {
    const form = new FormData();
    form.append('purpose', purpose);
    form.append('file', new Blob([content]), 'in.jsonl');
    return fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${a.key}` }, body: form });
  };
  const bad = await upload('{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-5.1"}}\nnot json\n');
  t.is(bad.status, 400);
  t.regex(((await bad.json()) as any).error.message, /line 2 is not valid JSON/);
  const dup = await upload(jsonl(2).replace('line-1', 'line-0'));
  t.regex(((await dup.json()) as any).error.message, /custom_id 'line-0' is used twice/);
  const tooMany = await upload(Array.from({ length: BATCH_LIMITS.maxLines + 1 }, (_, i) => JSON.stringify({ custom_id: `${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'm' } })).join('\n'));
  t.is(tooMany.status, 400);
  t.regex(((await tooMany.json()) as any).error.message, /limit of lines per batch/);
  const purpose = await upload(jsonl(1), 'fine-tune');
  t.regex(((await purpose.json()) as any).error.message, /purpose must be 'batch'/);
  // A batch whose lines call another endpoint than the batch's.
  const ok = (await (await upload(jsonl(2, '/v1/responses'))).json()) as any;
  const mismatch = await fetch(`${gw.url}/v1/batches`, {
    method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: ok.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
  });
  t.is(mismatch.status, 400);
  t.regex(((await mismatch.json()) as any).error.message, /line 1 calls \/v1\/responses/);
  const other = await gw.newAccount();
  const otherKey = (await gw.newKey(other.id)).key;
  const foreign = await fetch(`${gw.url}/v1/files/${ok.id}`, { headers: { authorization: `Bearer ${otherKey}` } });
  t.is(foreign.status, 404, 'another account does not see the file');
});

test.serial('progress is the sum of the slices\' own counts: a slice reported again counts once, and no slice re-reads the batch\'s lines', async (t) => {
  const { reportSlice, tally } = await import('../../capabilities/batches/progress');
  const { captureQueries } = await import('../helpers/indexes');
  const store = batchModels(gw.deps.db.conn);
  const now = new Date();
  const id = `batch_progress${Date.now()}`;
  await store.Batch.create({
    _id: id, account_id: 'acct_p', key_id: 'key_p', api: 'openai', endpoint: '/v1/chat/completions', input_file_id: 'file-p', completion_window: '24h',
    metadata: null, status: 'in_progress', total: 600, completed: 0, failed: 0, cost_nano: 0, created_at: now, expires_at: new Date(now.getTime() + 86_400_000),
  } as never);
  const first = tally([{ status_code: 200, cost_nano: 5 }, { status_code: 200, cost_nano: 7 }, { status_code: 400, cost_nano: 0 }]);
  t.deepEqual(first, { completed: 2, failed: 1, costNano: 12 });
  const sent = await captureQueries(async () => {
    await reportSlice(store, { _id: id }, 0, first);
    await reportSlice(store, { _id: id }, 250, tally([{ status_code: 200, cost_nano: 3 }]));
    await reportSlice(store, { _id: id }, 0, first); // the first slice's retry
  });
  const b = await store.Batch.findById(id).lean();
  t.like(b, { completed: 3, failed: 1, cost_nano: 15 });
  t.false(sent.some((q) => q.collection === 'batch_lines'), 'no line is read to report a slice');

  // A retried slice finds its recorded lines by id (the embedded store scans for any other filter).
  const { recordedLines } = await import('../../capabilities/batches/progress');
  const { lineId } = await import('../../capabilities/batches/store');
  for (const index of [3, 7, 260]) {
    await store.Line.create({ _id: lineId(id, index), batch_id: id, index, custom_id: `c${index}`, status_code: index === 7 ? 500 : 200, request_id: null, body: {}, cost_nano: index, created_at: now } as never);
  }
  const reads = await captureQueries(async () => {
    const lines = await recordedLines(store, id, 0, 250);
    t.deepEqual(lines.map((l) => l.index).sort((a, b) => a - b), [3, 7]);
    t.deepEqual(tally(lines), { completed: 1, failed: 1, costNano: 10 });
  });
  t.true(reads.filter((q) => q.collection === 'batch_lines').every((q) => Object.keys(q.filter).join() === '_id'), 'by id only');
});

test.serial('deleting a batch\'s input file while it runs: the batch runs to its end, its output and error files keep their content, deleting the output deletes only it', async (t) => {
  t.timeout(300_000);
  const worker = startWorker();
  const store = batchModels(gw.deps.db.conn);
  await gw.control('POST', '/latency', { ttft_ms: 100, token_delay_ms: 0 });
  try {
    const a = await account();
    const openai = new OpenAI({ apiKey: a.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const bad = JSON.stringify({ custom_id: 'bad', method: 'POST', url: '/v1/chat/completions', body: { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] } });
    const file = await openai.files.create({ file: await toFile(Buffer.from(`${jsonl(60, '/v1/chat/completions', 'del')}\n${bad}`), 'in.jsonl'), purpose: 'batch' });
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await until('some lines', async () => (await store.Line.countDocuments({ batch_id: batch.id })) >= 5, 120_000);
    t.true((await openai.files.delete(file.id)).deleted);
    await t.throwsAsync(openai.files.retrieve(file.id), { instanceOf: OpenAI.NotFoundError }, 'the input is gone for the account at once');
    t.true(['in_progress', 'finalizing'].includes((await openai.batches.retrieve(batch.id)).status), 'the deletion did not stop the batch');
    // No new batch from a deleted file.
    await t.throwsAsync(openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }), { instanceOf: OpenAI.BadRequestError });

    const done = await until('the batch', async () => {
      const b = await openai.batches.retrieve(batch.id);
      return ['completed', 'failed', 'cancelled', 'expired'].includes(b.status) && b;
    });
    t.is(done.status, 'completed');
    t.deepEqual(done.request_counts, { total: 61, completed: 60, failed: 1 });
    const output = await (await openai.files.content(done.output_file_id!)).text();
    const errors = await (await openai.files.content(done.error_file_id!)).text();
    const outLines = output.trim().split('\n').map((l) => JSON.parse(l));
    t.is(outLines.length, 60, 'every answered line is in the output');
    t.deepEqual(outLines.map((o) => o.custom_id), Array.from({ length: 60 }, (_, i) => `del-${i}`));
    t.is((await openai.files.retrieve(done.output_file_id!)).bytes, Buffer.byteLength(output), 'the stored size is the content\'s');
    t.deepEqual(errors.trim().split('\n').map((l) => JSON.parse(l).custom_id), ['bad']);
    t.is((await openai.files.retrieve(done.error_file_id!)).bytes, Buffer.byteLength(errors));
    t.is((await store.File.findById(file.id).lean())?.content, null, 'the input\'s content is erased once the batch that needed it ended');

    // Deleting the output file deletes that file only.
    t.true((await openai.files.delete(done.output_file_id!)).deleted);
    await t.throwsAsync(openai.files.content(done.output_file_id!), { instanceOf: OpenAI.NotFoundError });
    t.is(await (await openai.files.content(done.error_file_id!)).text(), errors, 'the error file is untouched');
    t.is((await openai.batches.retrieve(batch.id)).request_counts?.completed, 60);
  } finally {
    await gw.control('POST', '/latency', { ttft_ms: 0, token_delay_ms: 0 });
    worker.kill('SIGKILL');
    await exited(worker);
  }
});

test.serial('deleting the input of a cancelled batch: its error file still names every line never run, its output is unchanged', async (t) => {
  t.timeout(300_000);
  const worker = startWorker();
  const store = batchModels(gw.deps.db.conn);
  await gw.control('POST', '/latency', { ttft_ms: 200, token_delay_ms: 0 });
  try {
    const a = await account();
    const openai = new OpenAI({ apiKey: a.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl(300, '/v1/chat/completions', 'cx')), 'in.jsonl'), purpose: 'batch' });
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await until('some lines', async () => (await store.Line.countDocuments({ batch_id: batch.id })) >= 10, 120_000);
    await openai.batches.cancel(batch.id);
    const done = await until('the cancel', async () => {
      const b = await openai.batches.retrieve(batch.id);
      return b.status === 'cancelled' && b;
    });
    const ran = done.request_counts!.completed;
    t.true(ran < 300, `the cancel landed mid-run (${ran} lines ran)`);
    const output = await (await openai.files.content(done.output_file_id!)).text();
    const errors = await (await openai.files.content(done.error_file_id!)).text();
    t.is(errors.trim().split('\n').length, 300 - ran);

    t.true((await openai.files.delete(file.id)).deleted);
    t.is(await (await openai.files.content(done.output_file_id!)).text(), output, 'the output is unchanged');
    const after = await (await openai.files.content(done.error_file_id!)).text();
    t.is(after, errors, 'the error file is unchanged');
    t.true(after.trim().split('\n').every((l) => JSON.parse(l).error.code === 'batch_cancelled'));
    t.is((await openai.files.retrieve(done.error_file_id!)).bytes, Buffer.byteLength(errors));
    t.is((await store.File.findById(file.id).lean())?.content, null, 'the input\'s content is erased');
  } finally {
    await gw.control('POST', '/latency', { ttft_ms: 0, token_delay_ms: 0 });
    worker.kill('SIGKILL');
    await exited(worker);
  }
});

test.serial('files.list pages with after / limit / order: every file once, also files created in the same millisecond; batches.list too', async (t) => {
  const a = await account();
  const openai = new OpenAI({ apiKey: a.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const store = batchModels(gw.deps.db.conn);
  const uploaded: string[] = [];
  for (let i = 0; i < 3; i++) uploaded.push((await openai.files.create({ file: await toFile(Buffer.from(jsonl(1)), `u${i}.jsonl`), purpose: 'batch' })).id);
  // 110 files sharing one creation millisecond (a timestamp cursor alone skips or repeats them), and a deleted one.
  const at = new Date();
  const docs = Array.from({ length: 111 }, (_, i) => ({
    _id: `file-same${String((i * 41) % 111).padStart(3, '0')}`, account_id: a.id, key_id: 'k', purpose: 'batch_output', filename: `s${i}.jsonl`, bytes: 1, content: null,
    batch_id: null, role: 'output', created_at: at, expires_at: new Date(at.getTime() + BATCH_LIMITS.fileTtlMs), deleted_at: i === 110 ? at : null,
  }));
  await store.File.collection.insertMany(docs as never[]);
  const expected = new Set([...uploaded, ...docs.filter((d) => !d.deleted_at).map((d) => d._id)]);

  const desc: any[] = [];
  for await (const f of openai.files.list({ limit: 7 })) desc.push(f);
  t.is(desc.length, 113, 'the SDK\'s auto-pagination reaches every file');
  t.is(new Set(desc.map((f) => f.id)).size, 113, 'no file twice');
  t.deepEqual(desc.map((f) => f.id).sort(), [...expected].sort());
  t.true(desc.every((f, i) => i === 0 || desc[i - 1].created_at >= f.created_at), 'newest first');
  const asc: string[] = [];
  for await (const f of openai.files.list({ limit: 10, order: 'asc' })) asc.push(f.id);
  t.deepEqual(asc, desc.map((f) => f.id).reverse(), 'order=asc is the same list, oldest first');
  const outputs: string[] = [];
  for await (const f of openai.files.list({ purpose: 'batch' })) outputs.push(f.id);
  t.deepEqual(outputs.sort(), [...uploaded].sort(), 'purpose filters');

  const get = (q: string) => fetch(`${gw.url}/v1/files?${q}`, { headers: { authorization: `Bearer ${a.key}` } });
  const first = (await (await get('limit=5')).json()) as any;
  t.like(first, { object: 'list', has_more: true, first_id: first.data[0].id, last_id: first.data[4].id });
  t.is(first.data.length, 5);
  const all = (await (await get('')).json()) as any;
  t.like(all, { has_more: false });
  t.is(all.data.length, 113, 'the default page is OpenAI\'s (up to 10,000)');
  t.is((await get('limit=0')).status, 400);
  t.is((await get('order=sideways')).status, 400);
  const unknown = await get('after=file-nope');
  t.is(unknown.status, 400);
  t.is(((await unknown.json()) as any).error.param, 'after');

  // GET /v1/batches: the same cursor, over batches created in one millisecond.
  const batchIds = Array.from({ length: 9 }, (_, i) => `batch_same${String((i * 4) % 9)}${Date.now()}`);
  await store.Batch.collection.insertMany(batchIds.map((_id) => ({
    _id, account_id: a.id, key_id: 'k', api: 'openai', endpoint: '/v1/chat/completions', input_file_id: 'file-x', completion_window: '24h', metadata: null,
    status: 'completed', total: 0, completed: 0, failed: 0, output_file_id: null, error_file_id: null, cost_nano: 0, created_at: at, expires_at: at,
  })) as never[]);
  const batches: string[] = [];
  for await (const b of openai.batches.list({ limit: 2 })) batches.push(b.id);
  t.deepEqual([...batches].sort(), [...batchIds].sort(), 'every batch once');
});

test.serial('files and batches count against the account\'s rate limit like every /v1 call, polling included; a line answered 429 is waited out (security audit)', async (t) => {
  t.timeout(300_000);
  const worker = startWorker();
  try {
    const a = await account();
    t.is((await gw.admin('PATCH', `/accounts/${a.id}`, { rate_limit: { rpm: 4, concurrency: 2 } })).status, 200);
    const h = { authorization: `Bearer ${a.key}` };
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([jsonl(3, '/v1/chat/completions', 'rl')]), 'in.jsonl');
    const up = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: h, body: form });
    t.is(up.status, 200);
    t.is(up.headers.get('x-ratelimit-limit-requests'), '4');
    t.is(up.headers.get('x-ratelimit-limit-concurrency'), '2');
    const file = (await up.json()) as any;
    const created = await fetch(`${gw.url}/v1/batches`, {
      method: 'POST', headers: { ...h, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
    t.is(created.status, 200);
    t.is(created.headers.get('x-ratelimit-limit-requests'), '4');
    const batch = (await created.json()) as any;
    // Four requests a minute: polling the batch (and the account's other batch and file views) runs into the limit.
    const polls: Response[] = [];
    for (let i = 0; i < 4; i++) polls.push(await fetch(`${gw.url}/v1/batches/${batch.id}`, { headers: h }));
    const limited = polls.find((r) => r.status === 429);
    t.truthy(limited, `statuses ${polls.map((r) => r.status).join(',')}`);
    t.truthy(limited?.headers.get('retry-after'));
    const body = (await limited!.json()) as any;
    t.is(body.error.code, 'rate_limit_exceeded');
    for (const path of ['/v1/files', `/v1/files/${file.id}`, `/v1/files/${file.id}/content`, '/v1/batches']) {
      t.is((await fetch(`${gw.url}${path}`, { headers: h })).status, 429, path);
    }
    const anthropic = await fetch(`${gw.url}/v1/messages/batches`, { headers: { 'x-api-key': a.key } });
    t.is(anthropic.status, 429);
    t.is(((await anthropic.json()) as any).type, 'error', 'in the messages shape');
    // The batch's lines meet the same limit; the worker waits each 429 out, so every line ends answered, none as a 429.
    const store = batchModels(gw.deps.db.conn);
    const done = await until('the batch', async () => {
      const b = await store.Batch.findById(batch.id).lean();
      return b?.status === 'completed' && b;
    }, 240_000);
    t.like(done, { total: 3, completed: 3, failed: 0 });
    const lines = await store.Line.find({ batch_id: batch.id }).lean();
    t.deepEqual(lines.map((l) => l.status_code), [200, 200, 200]);
  } finally {
    worker.kill('SIGKILL');
    await exited(worker);
  }
});

test.serial('request_counts move as lines finish, not only as slices end: a one-slice batch shows progress before its end', async (t) => {
  t.timeout(300_000);
  // Each answer takes 300 ms, 16 lines at a time: the batch's one slice (under 250 lines) runs for seconds.
  for (const ch of ['openai-a', 'openai-b', 'openai-c']) await gw.control('POST', '/latency', { channel: ch, ttft_ms: 300, token_delay_ms: 0 });
  const worker = startWorker();
  try {
    const a = await account();
    const openai = new OpenAI({ apiKey: a.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl(160, '/v1/chat/completions', 'prog')), 'in.jsonl'), purpose: 'batch' });
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const seen: Array<{ status: string; completed: number; cost: string }> = [];
    const done = await until('the batch', async () => {
      const b = await openai.batches.retrieve(batch.id);
      seen.push({ status: b.status, completed: b.request_counts!.completed, cost: (b as any).cost });
      return b.status === 'completed' && b;
    });
    t.is(done.request_counts!.completed, 160);
    const midway = seen.filter((s) => s.status === 'in_progress' && s.completed > 0 && s.completed < 160);
    t.true(midway.length > 0, `progress while running: ${JSON.stringify(seen.map((s) => s.completed))}`);
    t.true(midway.every((s) => parseCredits(s.cost) > 0), 'the cost so far moves with the counts');
    const counts = seen.map((s) => s.completed);
    t.deepEqual(counts, [...counts].sort((x, y) => x - y), 'never goes back');
  } finally {
    for (const ch of ['openai-a', 'openai-b', 'openai-c']) await gw.control('DELETE', `/latency?channel=${ch}`);
    worker.kill('SIGKILL');
    await exited(worker);
  }
});

test.serial('a line the upstream keeps answering 429 (no Retry-After: not the account\'s limit) ends as that 429 after a few tries; a cancel stops a waiting line', async (t) => {
  t.timeout(300_000);
  const channels = ['openai-a', 'openai-b', 'openai-c'];
  for (const channel of channels) await gw.control('POST', '/faults', { channel, fault: { type: 'status', status: 429 } });
  const worker = startWorker();
  try {
    const a = await account();
    const openai = new OpenAI({ apiKey: a.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl(2, '/v1/chat/completions', 'limited')), 'in.jsonl'), purpose: 'batch' });
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await until('the batch to end', async () => {
      const b = await openai.batches.retrieve(batch.id);
      return b.status === 'completed' && b;
    }, 90_000);
    t.deepEqual(done.request_counts, { total: 2, completed: 0, failed: 2 });
    const errors = (await (await openai.files.content(done.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    t.deepEqual(errors.map((e) => e.response.status_code), [429, 429]);
    t.is((await charges(a.id)).length, 0);

    // Still limited upstream: a cancel ends the batch promptly, its waiting lines not run (and not charged).
    const second = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await until('the lines to be waiting', async () => (await openai.batches.retrieve(second.id)).status === 'in_progress', 30_000);
    await new Promise((r) => setTimeout(r, 1_500));
    await openai.batches.cancel(second.id);
    const cancelled = await until('the cancel', async () => {
      const b = await openai.batches.retrieve(second.id);
      return b.status === 'cancelled' && b;
    }, 20_000);
    t.deepEqual(cancelled.request_counts, { total: 2, completed: 0, failed: 0 });
  } finally {
    for (const channel of channels) await gw.control('DELETE', `/faults?channel=${channel}`);
    worker.kill('SIGKILL');
    await exited(worker);
  }
});
