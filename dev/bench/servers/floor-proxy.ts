/**
 * Baseline: the least a billing gateway's call can cost here. The bare Koa relay (bare-proxy.ts) plus
 * only what this gateway's money rules make every chat call do, written as plainly as possible:
 *
 * - the key looked up by its hash, and the key's record, its wallet's balance and the account's
 *   per-minute counter read in one Redis script before the upstream is called (the spec's "402 and
 *   no upstream call" for a wallet that cannot pay);
 * - the request body parsed (the model, whether it streams) and the upstream's usage parsed from the
 *   answer (the last SSE event that carries it, for a stream);
 * - the charge and its journal entry (the usage row as JSON) written in one Redis script before the
 *   answer ends, so that a crash of the process after the answer loses no charge;
 * - the journal drained into the store, one document a call (the usage row carrying its charge), in
 *   batches every 200 ms as the gateway's drain, each entry deleted from the journal once its batch is in.
 *
 * No validation, routing, translation, failover, log line or metrics: bench:peers runs it
 * beside the gateway and the bare relay, so the gateway's distance from the least its contract costs is
 * measured in the same run as its distance from a proxy hop.
 *   PORT=... UPSTREAM=http://127.0.0.1:<sim>/ch/openai-a REDIS_URL=redis://... MONGO_URL=mongodb://... KEY=sk-... \
 *     node --import tsx dev/bench/servers/floor-proxy.ts
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import Koa from 'koa';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import { Pool } from 'undici';
import { sendHot, type RedisClient } from '../../../platform/redis';

const upstream = new URL(process.env.UPSTREAM!);
const pool = new Pool(upstream.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
const redis = new Redis(process.env.REDIS_URL!, { enableAutoPipelining: true });
const PREFIX = `floor:${process.pid}:`;
const NANO_PER_TOKEN = 1_000; // $1 a million tokens
const ESTIMATE_NANO = 1_000_000;

const hash = (text: string) => createHash('sha256').update(text).digest('hex');
const keyHash = hash(process.env.KEY ?? 'sk-floor');
await redis.set(`${PREFIX}key:${keyHash}`, JSON.stringify({ id: 'key_1', account_id: 'acct_1', wallet_id: 'wal_1', status: 'active', rpm: 100_000_000 }));
await redis.set(`${PREFIX}wallet:wal_1`, String(Number.MAX_SAFE_INTEGER));

const AUTH = `
local k = redis.call('GET', KEYS[1])
if not k then return false end
local n = redis.call('INCR', KEYS[3])
if n == 1 then redis.call('PEXPIRE', KEYS[3], 60000) end
return { k, redis.call('GET', KEYS[2]) or '0', n }`;
const CHARGE = `
local b = redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('XADD', KEYS[2], '*', 'e', ARGV[2])
return b`;
redis.defineCommand('floorAuth', { numberOfKeys: 3, lua: AUTH });
redis.defineCommand('floorCharge', { numberOfKeys: 2, lua: CHARGE });
// Sent as the gateway sends its hot commands (platform/redis.ts `sendHot`): at once when nothing else waits
// on Redis, auto-pipelined under load.
const send = <T>(command: () => Promise<T>): Promise<T> => sendHot(redis as unknown as RedisClient, command);
const scripts = redis as unknown as {
  floorAuth(key: string, wallet: string, minute: string): Promise<[string, string, number] | null>;
  floorCharge(wallet: string, journal: string, nano: number, entry: string): Promise<number>;
};

interface Usage { prompt_tokens?: number; completion_tokens?: number }
async function charge(record: { id: string; account_id: string; wallet_id: string }, model: string, usage: Usage | undefined): Promise<void> {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  const nano = (input + output) * NANO_PER_TOKEN;
  const entry = JSON.stringify({ key_id: record.id, account_id: record.account_id, model, input_tokens: input, output_tokens: output, cost_nano: nano, at: Date.now() });
  await send(() => scripts.floorCharge(`${PREFIX}wallet:${record.wallet_id}`, JOURNAL, nano, entry));
}

/** The usage of the last `data:` event that has one, in an SSE text tail. */
function usageIn(tail: string): Usage | undefined {
  let at = tail.lastIndexOf('"usage"');
  while (at >= 0) {
    const start = tail.lastIndexOf('data: ', at);
    const end = tail.indexOf('\n', at);
    if (start >= 0 && end > at) {
      try {
        const u = JSON.parse(tail.slice(start + 6, end)).usage;
        if (u) return u as Usage;
      } catch {
        // not a whole event: look further back
      }
    }
    at = tail.lastIndexOf('"usage"', at - 1);
  }
  return undefined;
}

// The journal's drain: what a call leaves in the store, written off the request's path, as the gateway's
// drain does it (capabilities/accounts/ledger-journal.ts): a batch every 200 ms, at once while full ones wait.
const JOURNAL = `${PREFIX}journal`;
const DRAIN_DELAY_MS = 200;
const BATCH = 1000;
const mongo = await MongoClient.connect(process.env.MONGO_URL!);
const rows = mongo.db().collection<{ _id: string }>('floor_usage');
async function drain(): Promise<void> {
  for (;;) {
    const entries = (await redis.xrange(JOURNAL, '-', '+', 'COUNT', BATCH)) as Array<[string, string[]]>;
    if (entries.length > 0) {
      await rows.insertMany(entries.map(([id, fields]) => ({ _id: id, ...JSON.parse(fields[1]) })), { ordered: false });
      await redis.xdel(JOURNAL, ...entries.map(([id]) => id));
    }
    if (entries.length < BATCH) await new Promise((resolve) => setTimeout(resolve, DRAIN_DELAY_MS));
  }
}
drain().catch((err) => {
  console.error('the journal drain stopped', err);
  process.exit(1);
});

const app = new Koa();
app.use(async (ctx) => {
  const bearer = ctx.get('authorization').slice(7);
  const chunks: Buffer[] = [];
  for await (const c of ctx.req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  const body = JSON.parse(raw.toString('utf8')) as { model?: string; stream?: boolean };
  const minute = Math.floor(Date.now() / 60_000);
  const auth = await send(() => scripts.floorAuth(`${PREFIX}key:${hash(bearer)}`, `${PREFIX}wallet:wal_1`, `${PREFIX}rpm:acct_1:${minute}`));
  if (!auth) {
    ctx.status = 401;
    ctx.body = { error: { message: 'invalid key', type: 'authentication_error' } };
    return;
  }
  const record = JSON.parse(auth[0]) as { id: string; account_id: string; wallet_id: string; rpm: number };
  if (Number(auth[1]) < ESTIMATE_NANO || auth[2] > record.rpm) {
    ctx.status = Number(auth[1]) < ESTIMATE_NANO ? 402 : 429;
    ctx.body = { error: { message: 'refused', type: 'billing_error' } };
    return;
  }
  const res = await pool.request({
    path: upstream.pathname + ctx.path,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer upstream' },
    body: raw,
  });
  const model = String(body.model);
  if (!body.stream) {
    const text = await res.body.text();
    await charge(record, model, res.statusCode === 200 ? (JSON.parse(text) as { usage?: Usage }).usage : undefined);
    ctx.status = res.statusCode;
    ctx.type = 'application/json';
    ctx.body = text;
    return;
  }
  // A stream is relayed as it comes; its charge is written before the response ends.
  ctx.respond = false;
  const out = ctx.res;
  out.writeHead(res.statusCode, { 'content-type': String(res.headers['content-type'] ?? 'text/event-stream') });
  let tail = '';
  for await (const c of res.body) {
    if (!out.write(c)) await once(out, 'drain');
    tail = (tail + (c as Buffer).toString('utf8')).slice(-4096);
  }
  await charge(record, model, usageIn(tail));
  out.end();
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
server.keepAliveTimeout = 30_000;
