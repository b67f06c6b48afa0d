/**
 * `npm run bench:store-rows`: the embedded store's CPU for the rows one chat
 * call leaves (its ledger row and its usage row, written in the journal
 * drain's batches), one way of writing them against another, measured in the
 * same run on one FerretDB (v1 on SQLite, the dev and test store). Rounds
 * alternate the two on fresh databases; the rows are made by the code's own
 * functions from one chat call's figures. BENCH_COMPARE picks the pair:
 *   ids (the default): the request ids as random hex (before) against time-first
 *           ids (platform/ids.ts newRequestId: after), over a store that grows to
 *           BENCH_CALLS calls; prints the CPU per call for each 50,000 calls, since
 *           what random keys cost grows with the index they go into
 *   layout: every usage field written (defaults included), every schema index and the
 *           account_id index the ledger and usage schemas had besides (before), against
 *           the usage row without its default fields (capabilities/usage/usage.ts
 *           usageDoc) and only unique indexes on this store (platform/mongo.ts: after)
 * Prints FerretDB's CPU per call (median of the rounds) and after/before.
 * Env: BENCH_COMPARE (ids), BENCH_CALLS (200000 for ids, 20000 for layout, per round), BENCH_BATCH (500 rows per insert),
 * BENCH_ROUNDS (2 for ids, 3 for layout).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import mongoose, { type Model } from 'mongoose';
import { benchServices } from './lib/stack';
import { pidOfPort, processSet } from './lib/cpu';
import { stopAll } from '../scripts/lib/proc';
import { usageDoc } from '../../capabilities/usage/usage';
import { newRequestId } from '../../platform/ids';
import { USAGE_DEFAULTS } from '../../capabilities/usage/store';
import { connectStore } from '../../capabilities/store';

const COMPARE = process.env.BENCH_COMPARE ?? 'ids';
if (COMPARE !== 'ids' && COMPARE !== 'layout') throw new Error('BENCH_COMPARE: ids or layout');
const CALLS = Number(process.env.BENCH_CALLS ?? (COMPARE === 'ids' ? 200_000 : 20_000));
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (COMPARE === 'ids' ? 2 : 3));
const SLICE = 50_000;

const { services } = await benchServices('store-rows');
const ferret = processSet({ ferretdb: pidOfPort(services.env.MONGO_URL) });
// The schemas (and so their indexes) as the processes register them.
const schemaDb = await connectStore(services.env.MONGO_URL);
const models = { ledger: schemaDb.Ledger as unknown as Model<never>, usage: schemaDb.Usage as unknown as Model<never> };

type Layout = 'before' | 'after';

/** A request id as the gateway made it before time-first ids: 24 random hex digits. */
const randomRequestId = () => `req_${randomUUID().replace(/-/g, '').slice(0, 24)}`;

function call(i: number, layout: Layout) {
  const id = COMPARE === 'ids' ? (layout === 'before' ? randomRequestId() : newRequestId()) : `req_${i.toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
  const usage = usageDoc({
    _id: id, request_id: id, account_id: `acct_${i % 7}`, key_id: 'key_0123456789', key_name: 'production', key_prefix: 'sk-mgateway-12',
    endpoint: '/v1/chat/completions', status: 'success', model: 'gpt-5.1', input_tokens: 14, output_tokens: 32, cached_tokens: 0,
    server_tool_calls: 0, unit_count: 46, unit_type: 'token', cost_nano: 412_000, latency_ms: 3, attempts_count: 1, error_code: null,
    error_message: null, usage_estimated: false,
  });
  const ledger = {
    _id: `${id}:charge`, account_id: `acct_${i % 7}`, key_id: 'key_0123456789', kind: 'charge', amount_nano: -412_000,
    key_spend_nano: 412_000, ref: id, created_at: new Date(), recorded_at: new Date(), writer: 'a1b2c3d4e5f6', seq: i,
  };
  return { usage, ledger };
}

/** One round on a fresh database: FerretDB's CPU per call, for each SLICE calls (layout: one figure for the round). */
async function round(layout: Layout): Promise<number[]> {
  const db = mongoose.connection.getClient().db(`store_rows_${layout}_${Math.random().toString(36).slice(2, 8)}`);
  for (const [name, model] of Object.entries(models)) {
    const all = model.schema.indexes();
    // Layout before: every index, and the account_id index the ledger and usage schemas had besides (their compound indexes serve it).
    const wanted = COMPARE === 'layout' && layout === 'before' ? [...all, [{ account_id: 1 }, {}] as const] : all.filter(([, o]) => o?.unique);
    await db.createCollection(name);
    for (const [fields, options] of wanted) await db.collection(name).createIndex(fields as Record<string, 1 | -1>, options as Record<string, unknown>);
  }
  const slice = COMPARE === 'ids' ? SLICE : CALLS;
  const figures: number[] = [];
  let mark = ferret.sample().ferretdb;
  let sinceMark = 0;
  for (let i = 0; i < CALLS; i += BATCH) {
    const calls = Array.from({ length: Math.min(BATCH, CALLS - i) }, (_, j) => call(i + j, layout));
    const usage = calls.map((c) => (COMPARE === 'layout' && layout === 'before' ? { ...USAGE_DEFAULTS, ...c.usage } : c.usage));
    await Promise.all([db.collection('usage').insertMany(usage as never[], { ordered: false }), db.collection('ledger').insertMany(calls.map((c) => c.ledger) as never[], { ordered: false })]);
    sinceMark += calls.length;
    if (sinceMark >= slice || i + BATCH >= CALLS) {
      const now = ferret.sample().ferretdb;
      figures.push(((now - mark) * 1000) / sinceMark);
      mark = now;
      sinceMark = 0;
    }
  }
  await db.dropDatabase();
  return figures;
}

await mongoose.connect(services.env.MONGO_URL);
const figures: Record<Layout, number[]> = { before: [], after: [] };
const names: Record<Layout, string> = COMPARE === 'ids' ? { before: 'random ids', after: 'time-first ids' } : { before: 'before', after: 'after' };
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
try {
  for (let r = 0; r < ROUNDS; r++) {
    for (const layout of r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
      const slices = await round(layout);
      figures[layout].push(mean(slices));
      const detail = slices.length > 1 ? ` (each ${SLICE.toLocaleString('en')} calls: ${slices.map((x) => x.toFixed(1)).join(', ')})` : '';
      console.log(`round ${r + 1} ${names[layout].padEnd(14)} FerretDB ${mean(slices).toFixed(1)} us of CPU per call (ledger + usage row), ${CALLS} calls in batches of ${BATCH}${detail}`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [b, a] = [median(figures.before), median(figures.after)];
  console.log(`\nFerretDB CPU per chat call's rows, median of ${ROUNDS}: ${names.before} ${b.toFixed(1)} us, ${names.after} ${a.toFixed(1)} us, after/before ${(a / b).toFixed(2)}`);
  if (COMPARE === 'layout') console.log(`usage row fields: before ${Object.keys({ ...USAGE_DEFAULTS, ...call(0, 'before').usage }).length}, after ${Object.keys(call(0, 'after').usage).length}`);
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  await mongoose.disconnect();
  await schemaDb.conn.close();
  await services.stop();
  await stopAll();
}
