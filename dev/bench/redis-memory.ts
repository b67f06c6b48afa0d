// `npm run bench:redis-memory`: does Redis memory grow with the history of
// chat calls? Drives 1,000,000 chat-shaped wallet ops (a charge with its usage
// row, each with its own request id) on ONE account through the real wallet
// code and Lua script (capabilities/accounts/wallet.ts `applyAhead`, platform/lua/wallet-apply.lua),
// 64 in flight like one busy gateway, against a fresh redis-server, and prints
// Redis `used_memory` after 1,000 ops and after 1,000,000.
//
// What it leaves out, and why: HTTP (the script is the part that stores per-op
// state), and Mongo: the bench stands in for the journal drain by trimming the
// shard's journal stream after each chunk of ops (the drain does the same,
// XACK + XDEL, once the rows are in Mongo), so the journal holds what a drain
// would not have written yet (nothing, at the measuring points). The journal's
// own size is bounded by the drain's lag, not by history (test/money covers
// the drain).
//   OPS (default 1000000), CONCURRENCY (64)
import fs from 'node:fs';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, spawnManaged, stopAll } from '../scripts/lib/proc';
import { ensureTools } from '../scripts/lib/tools';
import { connectRedis } from '../../platform/redis';
import { Wallet } from '../../capabilities/accounts/wallet';
import type { Db } from '../../capabilities/store';
import type { UsageDoc } from '../../capabilities/usage/store';

const OPS = Number(process.env.OPS ?? 1_000_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const FIRST = 1_000;
const ACCOUNT = 'acct_bench_memory';
const KEY = 'key_bench_memory';

const tools = await ensureTools({ need: { temporal: false, ferretdb: false, redis: true }, log: () => undefined });
const port = await freePort();
const dataDir = path.resolve(`.data/bench-redis-memory-${Date.now()}`);
fs.mkdirSync(dataDir, { recursive: true });
const server = spawnManaged({
  name: 'redis',
  cmd: tools.redisServer!,
  args: ['--bind', '127.0.0.1', '--port', String(port), '--dir', dataDir, '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
  logFile: path.join(dataDir, 'redis.log'),
});
const redis = connectRedis(`redis://127.0.0.1:${port}`, 'mg:');
redis.on('error', () => undefined); // refused until the server listens: the ping loop below waits for it
for (let i = 0; ; i++) {
  try {
    await redis.ping();
    break;
  } catch (err) {
    if (i > 100) throw err;
    await sleep(100);
  }
}

// No Mongo on this path: a store that throws if anything reaches it proves it.
const noMongo = new Proxy({}, { get: (_t, p) => { throw new Error(`the chat op path touched Mongo (${String(p)})`); } }) as Db;
const wallet = new Wallet(noMongo, redis);
wallet.journal.kick = () => undefined; // this bench trims the journal itself (see above)
await redis.set(accountRedisKeys.balance(ACCOUNT), String(1_000_000_000_000_000)); // a loaded projection: 1e9 credits

const journal = accountRedisKeys.journalOf(ACCOUNT);
const started = new Date();
let done = 0;

function usageRow(i: number): UsageDoc {
  const id = `req_${i.toString(36)}_${started.getTime().toString(36)}`;
  return {
    _id: id, account_id: ACCOUNT, key_id: KEY, endpoint: '/v1/chat/completions', model: 'gpt-5.1', status: 'success',
    input_tokens: 12, output_tokens: 30, cached_tokens: 0, server_tool_calls: 0, unit_count: 42, unit_type: 'token',
    cost_nano: 123_456, attempts_count: 1, error_code: null, error_message: null, usage_estimated: false, created_at: new Date(),
  } as unknown as UsageDoc;
}

async function drive(until: number): Promise<void> {
  const worker = async () => {
    for (;;) {
      const i = done++;
      if (i >= until) return;
      const requestId = usageRow(i)._id;
      const ticket = wallet.ticket();
      try {
        const r = await wallet.applyAhead(
          { opId: `${requestId}:charge`, accountId: ACCOUNT, keyId: KEY, kind: 'charge', amountNano: -123_456, keySpendNano: 123_456, ref: requestId },
          usageRow(i),
          ticket,
        );
        if (r.status !== 'applied') throw new Error(`op ${i}: ${r.status}`);
      } finally {
        ticket.close();
      }
      if (i % 10_000 === 0) await redis.xtrim(journal, 'MAXLEN', 0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  done = until;
  await redis.xtrim(journal, 'MAXLEN', 0);
}

async function memory(): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(2)} MB`;
const t0 = Date.now();
await drive(FIRST);
const afterFirst = await memory();
const keysFirst = await redis.dbsize();
await drive(OPS);
const afterAll = await memory();
const keysAll = await redis.dbsize();
const seconds = (Date.now() - t0) / 1000;
const balance = Number(await redis.get(accountRedisKeys.balance(ACCOUNT)));
const spend = Number(await redis.get(accountRedisKeys.keySpend(ACCOUNT, KEY)));
const window = await redis.hlen(accountRedisKeys.chatSeq(ACCOUNT, wallet.writer));

console.log(`bench:redis-memory: ${OPS.toLocaleString('en')} chat charges on one account, ${CONCURRENCY} in flight, ${seconds.toFixed(1)} s (${Math.round(OPS / seconds)} ops/s)`);
console.log(`  used_memory after ${FIRST.toLocaleString('en')} ops: ${mb(afterFirst)} (${keysFirst} keys)`);
console.log(`  used_memory after ${OPS.toLocaleString('en')} ops: ${mb(afterAll)} (${keysAll} keys)`);
console.log(`  growth: ${mb(afterAll - afterFirst)}; the writer's sequence window holds ${window} field(s)`);
console.log(`  (the 8-day op markers this replaces: about ${mb(104 * OPS)} for these ops)`);
const exact = balance === 1_000_000_000_000_000 - 123_456 * OPS && spend === 123_456 * OPS;
console.log(`  projection exact: ${exact ? 'yes' : `NO (balance ${balance}, spend ${spend})`}`);

redis.disconnect();
await server.stop();
await stopAll();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(exact ? 0 : 1);
