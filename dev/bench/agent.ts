/**
 * Added latency of an agent call over a plain chat call, retrieval included,
 * measured in the same run. An enterprise agent (persona, one attached team
 * base of 10,000 pages) answers through an agent key; a plain key of the same
 * enterprise calls the same model with the same message. Requests alternate
 * (plain, agent, agent without a base, ...) one at a time, so drift hits both alike; each
 * agent question is different and finds pages to inject.
 *   npx tsx dev/bench/agent.ts      (starts its own services on free ports)
 * Env: BENCH_PAGES (10000), BENCH_REQUESTS (2000 of each kind), BENCH_PRELUDE_ONLY=1 (skip the HTTP
 * comparison: only the in-process prelude and its steps).
 * Target: added p50 under 5 ms.
 */
import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { freePort, stopAll } from '../scripts/lib/proc';
import { benchServices, runOnce, startProcess } from './lib/stack';
import { connectStore } from '../../capabilities/store';
import { type PageDoc, knowledgeRedisKeys } from '../../capabilities/knowledge/store';
import { connectRedis } from '../../platform/redis';
import { loadConfig } from '../../platform/config';
import { createLogger } from '../../platform/logger';
import { sha256Hex } from '../../platform/secrets';
import { buildDeps } from '../../capabilities/bootstrap';
import { agentChatCall } from '../../gateway/chat/agent-prelude';
import { contextMessage } from '../../capabilities/agents/context';
import type { Ctx } from '../../gateway/context';

const PAGES = Number(process.env.BENCH_PAGES ?? 10_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const WARMUP = 200;

const { services, secrets } = await benchServices('agent');
const simPort = await freePort();
await startProcess('simulator', 'dev/simulator/server.ts', { SIMULATOR_PORT: String(simPort) }, simPort);
const simUrl = `http://127.0.0.1:${simPort}`;
const env = { ...services.env, ...secrets, LOG_LEVEL: 'warn', SIMULATOR_URL: simUrl };
await runOnce('dev/scripts/seed.ts', env);
const gwPort = await freePort();
await startProcess('gateway', 'gateway/server.ts', { ...env, PORT: String(gwPort) }, gwPort);
const gwUrl = `http://127.0.0.1:${gwPort}`;

const admin = async (method: string, p: string, body?: unknown, actingUser?: string) => {
  const r = await fetch(`${gwUrl}/admin/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json', ...(actingUser ? { 'x-acting-user': actingUser } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return (await r.json()) as any;
};

// ---------------------------------------------------------------- an enterprise, its owner, a base of PAGES pages
const enterprise = await admin('POST', '/accounts', { name: 'bench corp', enterprise: true });
await admin('POST', `/accounts/${enterprise.id}/topups`, { amount_usd: '1000000' });
const owner = await admin('POST', '/users', { email: `owner-${randomBytes(4).toString('hex')}@bench.test`, name: 'Owner' });
await admin('PUT', `/accounts/${enterprise.id}/members`, { user_id: owner.id, role: 'owner' });

// Made-up words with natural-language frequencies: bodies draw them Zipf-distributed (a few words are
// everywhere, most are rare), titles draw topical (rarer) words, and questions ask about a page's title.
const rand = (n: number) => Math.floor(Math.random() * n);
const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vor', 'qui', 'dan', 'pel', 'zo', 'ber', 'nix', 'ulm', 'tra', 'gos'];
const VOCABULARY = 20_000;
const vocabulary = [...new Set(Array.from({ length: VOCABULARY * 2 }, () => Array.from({ length: 2 + rand(4) }, () => syllables[rand(syllables.length)]).join('')))].slice(0, VOCABULARY);
const zipf = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(vocabulary.length ** Math.random()) - 1)];
const words = (n: number) => Array.from({ length: n }, zipf).join(' ');
const topical = (n: number) => Array.from({ length: n }, () => vocabulary[500 + rand(vocabulary.length - 500)]).join(' ');

console.log(`seeding ${PAGES} pages...`);
const mongoUrl = env.MONGO_URL;
const db = await connectStore(mongoUrl);
const kbId = 'handbook';
const documentId = `doc_${randomBytes(6).toString('hex')}`;
const buildId = `build_${randomBytes(6).toString('hex')}`;
const now = new Date();
await db.Kb.create({ _id: `${enterprise.id}/${kbId}`, account_id: enterprise.id, kb_id: kbId, name: 'Handbook', kind: 'team', readers: 'all', compiler: 'rules', compiler_model: null, deleted_at: null, created_at: now });
const titles: string[] = [];
for (let start = 0; start < PAGES; start += 1000) {
  const batch: PageDoc[] = [];
  for (let i = start; i < Math.min(PAGES, start + 1000); i++) {
    const title = topical(3);
    titles.push(title);
    batch.push({
      _id: `${buildId}:p${i}`, page_id: `p${i}`, account_id: enterprise.id, kb_id: kbId, document_id: documentId, build_id: buildId,
      title, summary: words(12), tags: [words(1)], aliases: [], links: [], body: words(120), confidence: 0.9, needs_review: false,
      source: { r2_key: `kb/${documentId}`, filename: 'handbook.md', locator: `p${i}`, compiled_at: now.toISOString(), model: 'rules' },
      outgoing_links: [], created_at: now,
    });
  }
  await db.Page.collection.insertMany(batch as never[]);
}
await db.KbDocument.create({
  _id: documentId, account_id: enterprise.id, kb_id: kbId, filename: 'handbook.md', content_type: 'text/markdown', content_hash: randomBytes(8).toString('hex'),
  r2_key: `kb/${documentId}`, size: 1, live_build_id: buildId, deleted_at: null, created_at: now, updated_at: now,
});
const redis = connectRedis(env.REDIS_URL, 'mg:');
await redis.incr(knowledgeRedisKeys.kbVersion(enterprise.id, kbId));
redis.disconnect();
await db.conn.close();

// ---------------------------------------------------------------- the agent and the two keys
const agent = await admin('POST', `/accounts/${enterprise.id}/agents`, {
  name: 'Bench helper', system_prompt: 'You are the bench helper. Answer from the handbook.', model_id: 'gpt-5.1', knowledge_bases: [kbId], published: true,
}, owner.id);
const agentKey = (await admin('POST', `/agents/${agent.id}/keys`, { name: 'bench agent' }, owner.id)).key as string;
const plainKey = (await admin('POST', `/accounts/${enterprise.id}/keys`, { name: 'bench plain' })).key as string;
// The same agent without a base: what the prelude costs apart from retrieval.
const bare = await admin('POST', `/accounts/${enterprise.id}/agents`, {
  name: 'Bench bare', system_prompt: 'You are the bench helper. Answer from the handbook.', model_id: 'gpt-5.1', published: true,
}, owner.id);
const bareKey = (await admin('POST', `/agents/${bare.id}/keys`, { name: 'bench bare' }, owner.id)).key as string;

// BENCH_PRELUDE_ONLY=1: only the in-process measures below (quick profiling runs).
const HTTP = process.env.BENCH_PRELUDE_ONLY !== '1';
const pool = new Pool(gwUrl, { connections: 1, pipelining: 1, keepAliveTimeout: 30_000 });
let injected = 0;
async function call(key: string, question: string): Promise<number> {
  const body = JSON.stringify({ model: 'gpt-5.1', messages: [{ role: 'user', content: question }], max_tokens: 16 });
  const t0 = performance.now();
  const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
  const text = await res.body.text();
  const ms = performance.now() - t0;
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${text}`);
  return ms;
}
const question = () => `What does the handbook say about ${titles[rand(titles.length)]}?`;

console.log('warming up...');
for (let i = 0; i < (HTTP ? WARMUP : 0); i++) {
  await call(plainKey, question());
  await call(agentKey, question());
  await call(bareKey, question());
}
const plain: number[] = [];
const agentMs: number[] = [];
const bareMs: number[] = [];
for (let i = 0; i < (HTTP ? REQUESTS : 0); i++) {
  const q = question();
  plain.push(await call(plainKey, q));
  agentMs.push(await call(agentKey, q));
  bareMs.push(await call(bareKey, q));
}

// How many agent calls found pages to inject (from the usage rows).
const db2 = await connectStore(mongoUrl);
const rows = await db2.Usage.find({ agent_id: agent.id }).select({ kb_page_ids: 1 }).lean();
injected = rows.filter((r) => (r.kb_page_ids ?? []).length > 0).length;
await db2.conn.close();

// The gateway's own work for an agent call, in process: the prelude (agent and settings from Redis, the
// creator's scope, retrieval over the base, the context, the rewritten body). End to end, the agent call
// also sends the upstream a longer prompt than the plain call, which the upstream then reads.
const deps = await buildDeps(loadConfig({ ...process.env, ...env }), createLogger('warn'));
const snapshot = (await deps.authLookup.byHash(sha256Hex(agentKey)))!;
const preludeMs: number[] = [];
// Where the prelude's time goes: its steps one by one (the calls gateway/chat/agent-prelude.ts makes), interleaved
// with whole preludes so both see the same machine.
const phases: Record<string, number[]> = { 'agent, settings, scope version (Redis)': [], 'creator scope (cached by version)': [], 'retrieval (search; base versions read only when not known)': [], 'context message': [] };
for (let i = 0; i < WARMUP + REQUESTS; i++) {
  const ctx = {
    state: { requestId: `bench-${i}`, startedAt: performance.now(), auth: { key: snapshot.key, account: snapshot.account!, balanceNano: 1e15, keySpendNano: 0 },
      body: { model: 'gpt-5.1', messages: [{ role: 'user', content: question() }], max_tokens: 16 } },
    get: () => '',
  } as unknown as Ctx;
  const t = performance.now();
  await agentChatCall(deps, ctx);
  if (i >= WARMUP) preludeMs.push(performance.now() - t);

  const t0 = performance.now();
  const rt = await deps.agents.service.runtime(agent.id, enterprise.id);
  const t1 = performance.now();
  await deps.agents.service.readableBy(rt.agent!, { version: rt.scopeVersion });
  const t2 = performance.now();
  const found = await deps.retrieval.search(rt.agent!.knowledge_bases, question(), { limit: deps.config.AGENT_CONTEXT_PAGES, offset: 0, versions: rt.kbVersions, snippets: false });
  const t3 = performance.now();
  contextMessage(found.hits.map((h) => h.page), deps.config.AGENT_CONTEXT_TOKENS);
  const t4 = performance.now();
  if (i < WARMUP) continue;
  phases['agent, settings, scope version (Redis)'].push(t1 - t0);
  phases['creator scope (cached by version)'].push(t2 - t1);
  phases['retrieval (search; base versions read only when not known)'].push(t3 - t2);
  phases['context message'].push(t4 - t3);
}
await deps.close();

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const f = (x: number) => `${x.toFixed(3)} ms`;
if (HTTP) {
  console.log(`\n${REQUESTS} sequential calls of each kind, base of ${PAGES} pages (${injected} of ${rows.length} agent calls injected pages)`);
  console.log(`  plain chat  p50 ${f(pct(plain, 50))}  p90 ${f(pct(plain, 90))}  p99 ${f(pct(plain, 99))}`);
  console.log(`  agent, no base  p50 ${f(pct(bareMs, 50))}  p90 ${f(pct(bareMs, 90))}  p99 ${f(pct(bareMs, 99))}`);
  console.log(`  agent call  p50 ${f(pct(agentMs, 50))}  p90 ${f(pct(agentMs, 90))}  p99 ${f(pct(agentMs, 99))}`);
  console.log(`added p50 of the prelude without retrieval: ${f(pct(bareMs, 50) - pct(plain, 50))}`);
  const added = pct(agentMs, 50) - pct(plain, 50);
  console.log(`added latency of an agent call end to end, p50: ${f(added)} (the upstream also reads the injected pages)`);
}
const own = pct(preludeMs, 50);
console.log(`gateway work of an agent call (prelude with retrieval, in process) p50 ${f(own)}  p90 ${f(pct(preludeMs, 90))}  p99 ${f(pct(preludeMs, 99))} (target < 5 ms) ${own < 5 ? 'OK' : 'OVER'}`);
for (const [name, xs] of Object.entries(phases)) console.log(`  ${name}: p50 ${f(pct(xs, 50))}  p90 ${f(pct(xs, 90))}`);
// The first step is one Redis round trip: the prelude measured in those is comparable across machine loads.
const roundTrip = pct(phases['agent, settings, scope version (Redis)'], 50);
console.log(`prelude p50 / one Redis round trip p50 (same run): ${(own / roundTrip).toFixed(2)}`);

await pool.close();
await stopAll();
await services.stop();
