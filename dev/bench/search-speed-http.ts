/**
 * `GET /api/v1/ext/wiki/search` over HTTP on the issue-22 collection (dev/bench/lib/abstracts.ts: 7.8 MB,
 * 5,183 abstracts, 10 Markdown files), without waiting for a full upload: the collection is built into the
 * store in this process by the build steps themselves (capabilities/knowledge/publish.ts, as
 * dev/bench/ingest-profile.ts does) for an account made through the operator API, then a gateway on
 * free ports answers 2-word and 10-word queries drawn from the corpus exactly as `npm run bench:ingest`
 * draws them (same seed). Prints p50/p95/p99 per query length, and the gateway's CPU per search.
 *
 *   npx tsx dev/bench/search-speed-http.ts [documents=10]      BENCH_SEARCHES=400
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Pool } from 'undici';
import { freePort, stopAll } from '../scripts/lib/proc';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { generateCorpus } from './lib/abstracts';
import { connectStore } from '../../capabilities/store';
import type { KbBuildDoc } from '../../capabilities/knowledge/store';
import { connectRedis } from '../../platform/redis';
import { createLogger } from '../../platform/logger';
import { PageStore } from '../../capabilities/knowledge/page-store';
import { MongoFileStore } from '../../capabilities/knowledge/storage/mongo-file-store';
import { compileBuild, publishBuild, type BuildDeps } from '../../capabilities/knowledge/publish';
import { RulesCompiler } from '../../capabilities/knowledge/compiler';
import { documentIdOf } from '../../capabilities/knowledge/ingestion';

const DOCS = Number(process.argv[2] ?? 10);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 400);
const files = generateCorpus().slice(0, DOCS);

const { services, secrets } = await benchServices('search-http');
const gwPort = await freePort();
const env: Record<string, string> = { ...services.env, ...secrets, DEPLOYMENT_MODE: 'development', LOG_LEVEL: 'warn' };
await runOnce('dev/scripts/seed.ts', env);
// BENCH_CPU_PROF=dir: the gateway writes a V8 CPU profile there when it stops.
const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
const gateway = await startProcess('gateway', 'gateway/server.ts', { ...env, PORT: String(gwPort) }, gwPort, profile);
const http = new Pool(`http://127.0.0.1:${gwPort}`, { connections: 4 });
async function call(method: 'GET' | 'POST', p: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await http.request({ method, path: p, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.body.text();
  return { status: r.statusCode, json: text ? JSON.parse(text) : null };
}
const admin = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
  const r = await call(method, `/admin/v1${p}`, { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body);
  if (r.status >= 300) throw new Error(`${method} ${p} answered ${r.status}: ${JSON.stringify(r.json)}`);
  return r.json;
};
const account = (await admin('POST', '/accounts', { name: 'bench-reader' })).id as string;
const key = (await admin('POST', `/accounts/${account}/keys`, { name: 'reader' })).key as string;

// The collection, built by the build steps in this process.
const db = await connectStore(services.env.MONGO_URL);
const redis = connectRedis(services.env.REDIS_URL, env.REDIS_PREFIX ?? 'mg:');
const deps: BuildDeps = { db, redis, log: createLogger('warn'), pages: new PageStore(db, redis), kbFiles: new MongoFileStore(db.KbFile) };
const rules = new RulesCompiler();
const b0 = performance.now();
let pages = 0;
for (const f of files) {
  const data = Buffer.from(f.markdown);
  const hash = createHash('sha256').update(data).digest('hex');
  const documentId = documentIdOf(account, 'default', f.filename);
  const r2 = `kb/${account}/default/${documentId}/${hash.slice(0, 32)}`;
  const now = new Date();
  await deps.kbFiles.put(r2, { data, contentType: 'text/markdown', filename: f.filename });
  await db.KbDocument.create({
    _id: documentId, account_id: account, kb_id: 'default', filename: f.filename, content_type: 'text/markdown', content_hash: hash, r2_key: '', size: data.length,
    live_build_id: null, live_seq: 0, deleted_seq: 0, deleted_at: null, created_at: now, updated_at: now,
  });
  const build: KbBuildDoc = {
    _id: `build_${randomBytes(12).toString('hex')}`, doc_seq: `${documentId}#1`, account_id: account, kb_id: 'default', document_id: documentId, seq: 1,
    filename: f.filename, format: 'markdown', content_type: 'text/markdown', content_hash: hash, r2_key: r2, size: data.length, compiler: 'rules', model: 'rules',
    state: 'queued', pages_made: 0, warnings: [], error: null, created_at: now, started_at: null, finished_at: null, updated_at: now,
  };
  await db.KbBuild.create(build);
  pages += (await compileBuild(deps, build._id, () => rules)).pages;
  await publishBuild(deps, build._id);
}
console.log(`collection: ${files.length} documents -> ${pages} pages, built in ${((performance.now() - b0) / 1000).toFixed(1)} s`);

// The same queries as bench:ingest draws.
const words = files.flatMap((f) => f.markdown.split(/\W+/).filter((w) => w.length > 4)).slice(0, 200_000);
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const q = (n: number) => Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(' ');
const auth = { authorization: `Bearer ${key}` };
const f0 = performance.now();
const first = await call('GET', `/api/v1/ext/wiki/search?q=${encodeURIComponent(q(2))}`, auth);
console.log(`first search (loads the base, builds its index): ${(performance.now() - f0).toFixed(0)} ms, status ${first.status}, total_hits ${first.json?.total_hits}`);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const cpuOf = (pid: number) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // ms at 100 ticks a second
};
for (const n of [2, 10]) {
  const times: number[] = [];
  const c0 = cpuOf(gateway.child.pid!);
  for (let i = 0; i < SEARCHES; i++) {
    const s0 = performance.now();
    const r = await call('GET', `/api/v1/ext/wiki/search?q=${encodeURIComponent(q(n))}`, auth);
    if (r.status !== 200) throw new Error(`search answered ${r.status}: ${JSON.stringify(r.json)}`);
    times.push(performance.now() - s0);
  }
  const cpu = (cpuOf(gateway.child.pid!) - c0) / SEARCHES;
  console.log(`search ${String(n).padStart(2)}-word queries over HTTP: p50 ${pct(times, 50).toFixed(1)} ms  p95 ${pct(times, 95).toFixed(1)} ms  p99 ${pct(times, 99).toFixed(1)} ms (n=${SEARCHES}); gateway CPU ${cpu.toFixed(2)} ms a search`);
}
console.log(`load average ${(await import('node:os')).loadavg()[0].toFixed(1)}`);
await http.close();
await db.conn.close();
redis.disconnect();
await stopAll();
await services.stop();
process.exit(0);
