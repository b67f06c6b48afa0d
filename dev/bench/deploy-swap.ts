/**
 * `npm run swap` (docs/workflow-changes.md): a deploy swap under load, on a throw-away stack.
 *
 * Workers:
 * 1. SWAP_TASKS (200) media tasks are accepted by the gateway and run on worker
 *    build A (a real `workers/main.ts` process, the current workflow bundle);
 * 2. build B starts: the same workflows plus a changed step before the
 *    settlement, guarded by `patched()` (test/workflows/altered/changed-step.ts);
 * 3. A gets SIGTERM and drains (stops polling, finishes its activities); B takes
 *    A's workflows over (replaying their histories: the old path) and runs
 *    SWAP_AFTER (50) more tasks started after the swap (the new path);
 * Checks: every task ends once (one final state, one completed workflow), is
 * charged once (one reserve and one settle row in the ledger, each account's
 * balance = grant + top-up - the tasks' costs, the wallet audit finds no drift),
 * no workflow task failed (no nondeterminism error, none of any other kind).
 *
 * Gateways: SWAP_STREAMS (20) streamed chat calls run on gateway G1 (a real
 * `gateway/server.ts` process); G2 starts, G1 gets SIGTERM: G1's streams
 * finish within SHUTDOWN_GRACE_MS and new calls go to G2; then the same with a
 * grace shorter than the streams, where G1 cuts them at the deadline: every
 * stream is either finished or billed for what it sent (its usage row and one
 * charge), none lost.
 *
 *   npm run swap                       the whole run, figures printed at the end
 *   SWAP_TASKS=50 npm run swap          smaller
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startServices, type Services } from '../scripts/lib/services';
import { ensureTools } from '../scripts/lib/tools';
import { freePort, stopAll } from '../scripts/lib/proc';
import { scratchDir } from '../scripts/lib/scratch';
import { bundleWorkflows } from '../scripts/bundle-workflows';
import { WORKFLOWS_PATH } from '../../platform/temporal';
import { WORKFLOW_INTERCEPTORS_PATH } from '../../platform/tracing/temporal';
import { PATCH_ID } from '../../test/workflows/altered/changed-step';
import type { Config } from '../../platform/config';

const root = fileURLToPath(new URL('../..', import.meta.url));
process.chdir(root);
const TASKS = Number(process.env.SWAP_TASKS ?? 200);
const AFTER = Number(process.env.SWAP_AFTER ?? 50);
const STREAMS = Number(process.env.SWAP_STREAMS ?? 20);
const ACCOUNTS = 10;
/** SWAP_PARTS=gateways runs only the gateway swap. */
const PARTS = (process.env.SWAP_PARTS ?? 'workers,gateways').split(',');
/** The simulator's time scale: an image task is due this long after its submission. */
const TASK_MS = Number(process.env.SWAP_TASK_MS ?? 40_000);
const FINAL = new Set(['succeeded', 'failed', 'expired', 'cancelled']);
const MODEL = { model: 'flux-kontext-pro', prompt: 'a fox in the snow', async: true };

const children: ChildProcess[] = [];
const say = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const figures: Record<string, unknown> = {};
let services: Services | undefined;
let failed = false;
const check = (ok: boolean, what: string) => {
  say(`${ok ? '✔' : '✘'} ${what}`);
  if (!ok) failed = true;
};

const { startGateway, testConfig } = await import('../../test/helpers/stack');
const { createSimulator } = await import('../simulator/app');
/** The chat simulator of the gateway swap (the worker swap's gateway has its own, with media). */
const chatSim = createSimulator({ ttftMs: 0, tokenDelayMs: 0 });
const sharedSim = { url: await chatSim.listen(0, '127.0.0.1') };
const simUrlOf = (s: { url: string }) => s.url;
try {
  const dataDir = scratchDir('deploy-swap');
  await ensureTools({ need: { temporal: true, ferretdb: true, redis: true }, log: () => undefined });
  services = await startServices({ dataDir, ports: { temporal: 27433, temporalUi: 28433, mongo: 47217, redis: 26579 }, portFallback: true, mongoDb: 'swap', log: () => undefined });
  Object.assign(process.env, services.env, { DEPLOYMENT_MODE: 'test' });
  say(`stack up (${dataDir})`);

  const bundleA = await bundleWorkflows(path.join(dataDir, 'bundle-a.js'));
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_PATH, fileURLToPath(new URL('../../test/workflows/altered/changed-step.ts', import.meta.url))],
    logger: { log() {}, info() {}, warn() {}, error: console.error, debug() {}, trace() {} },
  });
  const bundleB = path.join(dataDir, 'bundle-b.js');
  fs.writeFileSync(bundleB, code);
  say('bundles A (current) and B (a changed step behind patched()) built');

  if (PARTS.includes('workers')) await workerSwap(bundleA, bundleB);
  if (PARTS.includes('gateways')) {
    await gatewaySwap(20_000, 150, 'streams shorter than the grace');
    await gatewaySwap(1_500, 400, 'streams longer than the grace');
  }
} catch (err) {
  failed = true;
  console.error(err);
} finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await services?.stop();
  await stopAll();
  await chatSim.close();
}
console.log(`\nfigures: ${JSON.stringify(figures, null, 2)}`);
console.log(failed ? '\n✘ the swap broke a rule (see above)' : '\n✔ every check held');
process.exit(failed ? 1 : 0);

// ---------------------------------------------------------------------------

async function workerSwap(bundleA: string, bundleB: string) {
  const gw = await startGateway({ MEDIA_POLL_INTERVAL_MS: '2000' }, { simulator: true, mediaDelayMs: TASK_MS });
  try {
    const env = (bundle: string, metrics: number) => ({
      ...envOf(gw.config), SIMULATOR_URL: gw.simUrl!, WORKFLOW_BUNDLE: bundle, MEDIA_POLL_INTERVAL_MS: '2000', SHUTDOWN_GRACE_MS: '20000',
      WORKER_METRICS_PORT: String(metrics), METRICS_PORT: String(metrics),
    });
    const a = start('worker-A', 'workers/main.ts', env(bundleA, await freePort()));
    await a.until(/worker started/, 120_000);
    say('worker A (build A) polling');

    const accounts: Array<{ id: string; key: string }> = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const acc = await gw.newAccount();
      const r = await gw.admin('POST', `/accounts/${acc.id}/topups`, { amount_usd: '200' });
      if (r.status !== 201) throw new Error(`top-up refused: ${JSON.stringify(r.body)}`);
      accounts.push({ id: acc.id, key: (await gw.newKey(acc.id)).key });
    }
    const before = new Map<string, number>();
    for (const acc of accounts) before.set(acc.id, await gw.deps.wallet.balance(acc.id));

    const submit = async (n: number, offset: number) => {
      const ids: string[] = [];
      const refused: string[] = [];
      await pool(n, 16, async (i) => {
        const acc = accounts[(offset + i) % accounts.length];
        const r = await fetch(`${gw.url}/v1/images/generations`, {
          method: 'POST', headers: { authorization: `Bearer ${acc.key}`, 'content-type': 'application/json' }, body: JSON.stringify(MODEL),
        });
        const body = (await r.json()) as { id?: string };
        if (r.status === 200 && body.id) ids.push(body.id);
        else refused.push(`${r.status} ${JSON.stringify(body).slice(0, 200)}`);
      });
      return { ids, refused };
    };
    const t0 = Date.now();
    const first = await submit(TASKS, 0);
    say(`${first.ids.length} tasks accepted in ${Date.now() - t0} ms (${first.refused.length} refused${first.refused[0] ? `: ${first.refused[0]}` : ''})`);
    check(first.refused.length === 0, `all ${TASKS} tasks accepted before the swap`);

    const b = start('worker-B', 'workers/main.ts', env(bundleB, await freePort()));
    await b.until(/worker started/, 120_000);
    say('worker B (build B) polling beside A');
    const openAtSwap = await gw.deps.db.Task.countDocuments({ _id: { $in: first.ids }, state: { $nin: [...FINAL] } });
    const sigterm = Date.now();
    a.child.kill('SIGTERM');
    const aCode = await a.exited;
    figures.worker_a_drain_ms = Date.now() - sigterm;
    figures.tasks_open_at_swap = openAtSwap;
    check(aCode === 0, `worker A drained and exited 0 after ${figures.worker_a_drain_ms} ms (${openAtSwap} of ${TASKS} tasks still open at the signal)`);

    const second = await submit(AFTER, TASKS);
    check(second.refused.length === 0, `${AFTER} more tasks accepted after the swap, on B alone`);
    const all = [...first.ids, ...second.ids];

    // Every task ends.
    const deadline = Date.now() + TASK_MS * 3 + 120_000;
    let open = all.length;
    while (Date.now() < deadline) {
      open = await gw.deps.db.Task.countDocuments({ _id: { $in: all }, state: { $nin: [...FINAL] } });
      if (open === 0) break;
      await sleep(2_000);
    }
    check(open === 0, `every task ended (${all.length - open} of ${all.length})`);
    figures.swap_total_ms = Date.now() - t0;

    // Once: one completed workflow each, no failed workflow task, the patch taken only by runs that started on B.
    let completed = 0;
    let taskFailures = 0;
    let nondeterminism = 0;
    let newPath = 0;
    let newPathAmongFirst = 0;
    const states: Record<string, number> = {};
    for (const id of all) {
      const h = gw.deps.temporal.workflow.getHandle(id);
      const d = await h.describe();
      if (d.status.name === 'COMPLETED') completed++;
      const history = await h.fetchHistory();
      for (const e of history.events ?? []) {
        const f = e.workflowTaskFailedEventAttributes;
        if (f) {
          taskFailures++;
          if (String(f.cause) === '24' || /nondetermin/i.test(f.failure?.message ?? '')) nondeterminism++;
        }
        const marker = e.markerRecordedEventAttributes;
        const markerText = Object.values(marker?.details ?? {}).flatMap((p) => p.payloads ?? []).map((p) => Buffer.from(p.data ?? []).toString()).join(' ');
        if (marker?.markerName === 'core_patch' && markerText.includes(PATCH_ID)) {
          newPath++;
          if (first.ids.includes(id)) newPathAmongFirst++;
        }
      }
    }
    for (const t of await gw.deps.db.Task.find({ _id: { $in: all } }).select({ state: 1 }).lean<Array<{ state: string }>>()) states[t.state] = (states[t.state] ?? 0) + 1;
    Object.assign(figures, { tasks: all.length, task_states: states, workflows_completed: completed, workflow_task_failures: taskFailures, nondeterminism_errors: nondeterminism, patched_path_runs: newPath, patched_path_runs_started_on_a: newPathAmongFirst });
    check(completed === all.length, `${completed} of ${all.length} workflows completed, once each (workflow id = task id)`);
    check(nondeterminism === 0, `${nondeterminism} nondeterminism errors`);
    check(taskFailures === 0, `${taskFailures} failed workflow tasks of any kind`);
    // patched() is true wherever the step runs live on B: every run started on B, and runs started on A whose settlement ran on B.
    check(newPath >= second.ids.length, `${newPath} runs took the patched step at their settlement (the ${second.ids.length} started on B, and ${newPathAmongFirst} started on A that settled on B); the others replayed A's path`);

    // Charged once: one reserve and one settle per task; balances agree with the tasks' costs; no drift.
    await gw.deps.wallet.journal.flush();
    const rows = await gw.deps.db.Ledger.find({ ref: { $in: all } }).lean<Array<{ _id: string; kind: string; amount_nano: number; ref: string }>>();
    const settles = rows.filter((r) => r.kind === 'settle').length;
    const reserves = rows.filter((r) => r.kind === 'reserve').length;
    check(settles === all.length && reserves === all.length, `ledger: ${reserves} reserves and ${settles} settlements for ${all.length} tasks`);
    const costs = await gw.deps.db.Task.find({ _id: { $in: all } }).select({ account_id: 1, cost_nano: 1 }).lean<Array<{ account_id: string; cost_nano: number }>>();
    let balanced = true;
    let drift = 0;
    for (const acc of accounts) {
      const spent = costs.filter((c) => c.account_id === acc.id).reduce((s, c) => s + c.cost_nano, 0);
      if ((await gw.deps.wallet.balance(acc.id)) !== before.get(acc.id)! - spent) balanced = false;
      const audit = await gw.deps.temporal.workflow.execute('auditWalletWorkflow', {
        taskQueue: gw.config.TEMPORAL_TASK_QUEUE, workflowId: `swap-audit-${acc.id}`, args: [{ accountId: acc.id, repair: false }],
      }) as { driftNano: number };
      drift += Math.abs(audit.driftNano);
    }
    figures.charged_nano = costs.reduce((s, c) => s + c.cost_nano, 0);
    check(balanced, 'every balance = before - the sum of its tasks\' costs');
    check(drift === 0, `wallet audit of ${accounts.length} accounts: drift ${drift} nano`);
    b.child.kill('SIGTERM');
    await b.exited;
  } finally {
    await gw.close();
  }
}

async function gatewaySwap(graceMs: number, tokenDelayMs: number, label: string) {
  const simCtl = async (p: string, body: unknown) => fetch(`${simUrlOf(sharedSim)}/_control${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const config = testConfig({ SIMULATOR_URL: simUrlOf(sharedSim) });
  const { connectStore } = await import('../../capabilities/store');
  const { readCatalogueFile, seedCatalogue } = await import('../../capabilities/catalogue/records');
  const db = await connectStore(config.MONGO_URL);
  await seedCatalogue(db, readCatalogueFile(config.CATALOGUE_FILE));
  // The simulator answers 24 tokens: 150 ms a token is a 3.6 s stream, 400 ms a 9.6 s one.
  await simCtl('/latency', { ttft_ms: 0, token_delay_ms: tokenDelayMs });
  const p1 = await freePort();
  const p2 = await freePort();
  const g1 = start('gateway-1', 'gateway/server.ts', { ...envOf(config), SIMULATOR_URL: simUrlOf(sharedSim), PORT: String(p1), SHUTDOWN_GRACE_MS: String(graceMs) });
  await g1.until(/gateway listening/, 120_000);
  const u1 = `http://127.0.0.1:${p1}`;
  const admin = async (p: string, body: unknown) => (await (await fetch(`${u1}/admin/v1${p}`, { method: 'POST', headers: { authorization: `Bearer ${config.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;
  const acc = await admin('/accounts', { name: 'swap' });
  const { key } = await admin(`/accounts/${acc.id}/keys`, { name: 'k' });
  // The new gateway is ready before the old one is told to stop (a rolling update's order).
  const g2 = start('gateway-2', 'gateway/server.ts', { ...envOf(config), SIMULATOR_URL: simUrlOf(sharedSim), PORT: String(p2), SHUTDOWN_GRACE_MS: String(graceMs) });
  await g2.until(/gateway listening/, 120_000);
  const streams = await Promise.all(Array.from({ length: STREAMS }, () => openStream(u1, key, 24)));
  await sleep(500);
  const sigterm = Date.now();
  g1.child.kill('SIGTERM');
  // New calls go to the new gateway while the old one drains.
  const during = await Promise.all(Array.from({ length: 5 }, () => openStream(`http://127.0.0.1:${p2}`, key, 5).then((s) => s.rest)));
  const ends = await Promise.all(streams.map((s) => s.rest));
  const g1Code = await g1.exited;
  const drainMs = Date.now() - sigterm;
  const finished = ends.filter((e) => e.text.includes('[DONE]')).length;
  const cut = ends.length - finished;
  // Billed: a usage row and one charge per call, written by the gateway that served it (G1 drained its own journal).
  const ids = streams.map((s) => s.requestId);
  const usage = await db.Usage.find({ _id: { $in: ids } }).lean<Array<{ status: string; cost_nano: number }>>();
  const charges = await db.Ledger.countDocuments({ _id: { $in: ids.map((i) => `${i}:charge`) } });
  const billedCut = usage.filter((u) => u.status !== 'success' && u.cost_nano > 0).length;
  figures[`gateway_swap_${graceMs}ms`] = { streams: STREAMS, finished, cut, usage_rows: usage.length, charges, cut_and_billed: billedCut, g1_drain_ms: drainMs, calls_on_g2_during_drain: during.filter((d) => d.text.includes('[DONE]')).length };
  check(g1Code === 0, `${label}: gateway 1 exited 0 after ${drainMs} ms`);
  check(finished + cut === STREAMS && usage.length === STREAMS && charges === STREAMS, `${label}: ${finished} finished, ${cut} cut at the deadline; ${usage.length} usage rows, ${charges} charges for ${STREAMS} streams`);
  check(during.every((d) => d.text.includes('[DONE]')), `${label}: calls made during the drain were served by gateway 2`);
  g2.child.kill('SIGTERM');
  await g2.exited;
  await db.conn.dropDatabase().catch(() => undefined);
  await db.conn.close();
}

// ---------------------------------------------------------------------------

function envOf(config: Config): NodeJS.ProcessEnv {
  return {
    ...process.env,
    MONGO_URL: config.MONGO_URL, REDIS_URL: config.REDIS_URL, REDIS_PREFIX: config.REDIS_PREFIX, TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: config.ADMIN_TOKEN, KEY_ENCRYPTION_KEY: config.KEY_ENCRYPTION_KEY,
    LOG_LEVEL: 'info', HOST: '127.0.0.1', DEPLOYMENT_MODE: 'test',
  };
}

function start(name: string, entry: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  const waiters: Array<() => void> = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
    waiters.splice(0).forEach((w) => w());
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child, exited, log: () => out,
    async until(re: RegExp, ms: number) {
      const end = Date.now() + ms;
      while (!re.test(out)) {
        if (child.exitCode !== null || Date.now() > end) throw new Error(`${name} never logged ${re}:\n${out.slice(-3000)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 500);
        });
      }
    },
  };
}

async function openStream(url: string, key: string, tokens: number) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5-mini', stream: true, max_tokens: tokens, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'tell me a long story' }] }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);
  const rest = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return { text, error: null as string | null };
        text += decoder.decode(value);
      }
    } catch (err) {
      return { text, error: String(err) };
    }
  })();
  return { status: res.status, requestId: res.headers.get('x-gateway-trace')!, rest };
}

async function pool(n: number, width: number, fn: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await fn(next++);
  }));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
