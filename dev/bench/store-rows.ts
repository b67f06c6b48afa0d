/**
 * `npm run bench:store-rows`: the embedded store's CPU for the rows one chat
 * call leaves (its ledger row and its usage row, written in the journal
 * drain's batches), for the layout the code writes today against the one it
 * wrote before, measured in the same run on one FerretDB (v1 on SQLite, the
 * dev and test store):
 *   before: every usage field written (defaults included), every schema index and
 *           the account_id index the ledger and usage schemas had besides
 *   after:  the usage row without its default fields (capabilities/usage/usage.ts
 *           usageDoc), only unique indexes on this store (platform/mongo.ts)
 * Rounds alternate before/after on fresh databases; prints FerretDB's CPU
 * per call (median of the rounds) and after/before. The rows are made by the
 * code's own functions from one chat call's figures.
 * Env: BENCH_CALLS (20000 per round), BENCH_BATCH (500 rows per insert), BENCH_ROUNDS (3).
 */
import os from 'node:os';
import mongoose, { type Model } from 'mongoose';
import { benchServices } from './lib/stack';
import { pidOfPort, processSet } from './lib/cpu';
import { stopAll } from '../scripts/lib/proc';
import { usageDoc } from '../../capabilities/usage/usage';
import { USAGE_DEFAULTS } from '../../capabilities/usage/store';
import { connectStore } from '../../capabilities/store';

const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const { services } = await benchServices('store-rows');
const ferret = processSet({ ferretdb: pidOfPort(services.env.MONGO_URL) });
// The schemas (and so their indexes) as the processes register them.
const schemaDb = await connectStore(services.env.MONGO_URL);
const models = { ledger: schemaDb.Ledger as unknown as Model<never>, usage: schemaDb.Usage as unknown as Model<never> };

function call(i: number) {
  const id = `req_${i.toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
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

async function round(layout: 'before' | 'after'): Promise<number> {
  const db = mongoose.connection.getClient().db(`store_rows_${layout}_${Math.random().toString(36).slice(2, 8)}`);
  for (const [name, model] of Object.entries(models)) {
    const all = model.schema.indexes();
    // Before: every index, and the account_id index the ledger and usage schemas had besides (their compound indexes serve it).
    const wanted = layout === 'before' ? [...all, [{ account_id: 1 }, {}] as const] : all.filter(([, o]) => o?.unique);
    await db.createCollection(name);
    for (const [fields, options] of wanted) await db.collection(name).createIndex(fields as Record<string, 1 | -1>, options as Record<string, unknown>);
  }
  const before = ferret.sample().ferretdb;
  for (let i = 0; i < CALLS; i += BATCH) {
    const calls = Array.from({ length: Math.min(BATCH, CALLS - i) }, (_, j) => call(i + j));
    const usage = calls.map((c) => (layout === 'before' ? { ...USAGE_DEFAULTS, ...c.usage } : c.usage));
    await Promise.all([db.collection('usage').insertMany(usage as never[], { ordered: false }), db.collection('ledger').insertMany(calls.map((c) => c.ledger) as never[], { ordered: false })]);
  }
  const us = ((ferret.sample().ferretdb - before) * 1000) / CALLS;
  await db.dropDatabase();
  return us;
}

await mongoose.connect(services.env.MONGO_URL);
const figures: Record<'before' | 'after', number[]> = { before: [], after: [] };
try {
  for (let r = 0; r < ROUNDS; r++) {
    for (const layout of r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
      const us = await round(layout);
      figures[layout].push(us);
      console.log(`round ${r + 1} ${layout.padEnd(6)} FerretDB ${us.toFixed(1)} us of CPU per call (ledger + usage row), ${CALLS} calls in batches of ${BATCH}`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [b, a] = [median(figures.before), median(figures.after)];
  console.log(`\nFerretDB CPU per chat call's rows, median of ${ROUNDS}: before ${b.toFixed(1)} us, after ${a.toFixed(1)} us, after/before ${(a / b).toFixed(2)}`);
  console.log(`usage row fields: before ${Object.keys({ ...USAGE_DEFAULTS, ...call(0).usage }).length}, after ${Object.keys(call(0).usage).length}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  await mongoose.disconnect();
  await schemaDb.conn.close();
  await services.stop();
  await stopAll();
}
