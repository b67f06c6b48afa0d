/**
 * `npx tsx dev/bench/store-by-id.ts [ferretdb binary ...]`: what one write or read
 * of a document by `_id` costs on the dev store (FerretDB v1 on SQLite) as the
 * collection grows, for each write a task's settlement could make
 * (`replaceOne`, `updateOne` with `$set`, `findOneAndUpdate`,
 * `findOneAndReplace`, `deleteOne` + `insertOne`) and for a `findOne` and an
 * `insertOne`. Each binary gets a store of its own (a fresh SQLite directory);
 * the default compares the unpatched build (if cached) with the patched one
 * (dev/scripts/lib/tools.ts `FERRETDB_PATCH`). Prints the median of 30 operations
 * at 1,000, 10,000 and 20,000 documents of usage-row size, and `uptime`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execSync } from 'node:child_process';
import mongoose from 'mongoose';
import { freePort, spawnManaged, stopAll, waitForPort } from '../scripts/lib/proc';
import { ferretSqliteUrl } from '../scripts/lib/services';
import { ensureTools, toolsCacheDir, FERRETDB_VERSION } from '../scripts/lib/tools';

const SIZES = [1_000, 10_000, 20_000];
const OPS = 30;

function row(i: number) {
  return {
    _id: `req_${String(i).padStart(24, '0')}`, request_id: `req_${i}`, account_id: `acct_${i % 3}`, key_id: 'key_x', key_name: 'chaos',
    key_prefix: 'sk-x-1234', endpoint: '/v1/chat/completions', model: 'gpt-5.1', status: 'success', error_code: null, error_message: null,
    input_tokens: 12, output_tokens: 12, cached_tokens: 0, server_tool_calls: 0, unit_count: 24, unit_type: 'token', cost_nano: 1234,
    reserved_nano: 0, latency_ms: 40, task_id: null, submitted_at: null, attempts_count: 1, result_urls: [], result_expires_at: null,
    usage_estimated: false, created_at: new Date(),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(bin: string): Promise<Record<string, Record<number, number>>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-by-id-'));
  const port = await freePort();
  const m = spawnManaged({
    name: 'ferretdb', cmd: bin, logFile: path.join(dir, 'ferretdb.log'),
    args: ['--handler=sqlite', `--sqlite-url=${ferretSqliteUrl(dir)}`, `--listen-addr=127.0.0.1:${port}`, '--telemetry=disable', `--state-dir=${dir}`, '--debug-addr=-', '--log-level=ERROR'],
  });
  await waitForPort(port, m, 30_000);
  const client = new mongoose.mongo.MongoClient(`mongodb://127.0.0.1:${port}/bench`);
  await client.connect();
  const c = client.db('bench').collection<ReturnType<typeof row>>('usage');
  const out: Record<string, Record<number, number>> = {};
  const time = async (what: string, size: number, op: (i: number) => Promise<unknown>) => {
    const ms: number[] = [];
    for (let k = 0; k < OPS; k++) {
      const i = Math.floor(Math.random() * size);
      const t0 = performance.now();
      await op(i);
      ms.push(performance.now() - t0);
    }
    (out[what] ??= {})[size] = Math.round(median(ms) * 100) / 100;
  };
  let have = 0;
  let extra = 10_000_000;
  try {
    for (const size of SIZES) {
      while (have < size) {
        const n = Math.min(1000, size - have);
        await c.insertMany(Array.from({ length: n }, (_, j) => row(have + j)));
        have += n;
      }
      const id = (i: number) => row(i)._id;
      await time('findOne({_id})', size, (i) => c.findOne({ _id: id(i) }));
      await time('insertOne', size, () => c.insertOne(row(extra++)));
      await time('replaceOne({_id})', size, (i) => c.replaceOne({ _id: id(i) }, { ...row(i), status: 'error' }));
      await time('updateOne({_id}, $set)', size, (i) => c.updateOne({ _id: id(i) }, { $set: { status: 'success', cost_nano: i } }));
      await time('findOneAndUpdate({_id}, $set)', size, (i) => c.findOneAndUpdate({ _id: id(i) }, { $set: { status: 'error' } }));
      await time('findOneAndReplace({_id})', size, (i) => c.findOneAndReplace({ _id: id(i) }, { ...row(i), status: 'success' }));
      await time('deleteOne({_id}) + insertOne', size, async (i) => {
        await c.deleteOne({ _id: id(i) });
        await c.insertOne(row(i));
      });
    }
  } finally {
    await client.close();
    await m.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

const given = process.argv.slice(2);
const bins: string[] = given.length ? given : [];
if (!given.length) {
  const plain = path.join(toolsCacheDir(), `ferretdb-${FERRETDB_VERSION}`, 'ferretdb');
  if (fs.existsSync(plain)) bins.push(plain);
  bins.push((await ensureTools({ need: { ferretdb: true, redis: false, temporal: false } })).ferretdb!);
}
console.log(`median ms of ${OPS} operations by _id, documents of usage-row size; uptime: ${execSync('uptime').toString().trim()}`);
for (const bin of bins) {
  const r = await measure(bin);
  console.log(`\n${bin}`);
  console.log(`  ${'operation'.padEnd(34)}${SIZES.map((s) => `${s} docs`.padStart(13)).join('')}`);
  for (const [what, by] of Object.entries(r)) console.log(`  ${what.padEnd(34)}${SIZES.map((s) => `${by[s]} ms`.padStart(13)).join('')}`);
}
await stopAll();
process.exit(0);
