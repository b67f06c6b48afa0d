import { randomBytes } from 'node:crypto';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import fs from 'node:fs';
import path from 'node:path';
import { spawnManaged, freePort, waitForPort, type Managed } from '../scripts/lib/proc';
import { gatewayNodeFlags } from '../scripts/build';
import { loadConfig } from '../../platform/config';
import { connectStore, type Db } from '../../capabilities/store';
import { connectRedis } from '../../platform/redis';
import { createLogger } from '../../platform/logger';
import { Wallet } from '../../capabilities/accounts/wallet';
import { readCatalogueFile, seedCatalogue } from '../../capabilities/catalogue/records';
import { FINAL_STATES } from '../../domain/media/task';
import { mulberry32, pick } from './random';

/**
 * The seeded chaos run (issue 14 section 1): 2 gateways and 2 workers on
 * loopback against the given services, a seeded random traffic mix (chat in
 * the four protocols, streaming or not, client aborts; async image tasks with
 * replayed Idempotency-Keys; top-ups; simulator faults), and a seeded fault
 * schedule (SIGKILL a worker, SIGKILL a gateway, each replaced at once). At
 * the end every task must be final and the money must add up: see `check`.
 */
export interface ChaosOptions {
  seed: number;
  seconds: number;
  /** Service URLs (MONGO_URL with a database of its own, REDIS_URL, TEMPORAL_ADDRESS). */
  env: Record<string, string>;
  simulatorUrl: string;
  clients?: number;
  killWorkerEveryMs?: number;
  killGatewayEveryMs?: number;
  /** Restarts Redis or the Mongo-wire store (dev/scripts/lib/services.ts `restart`); without it those faults are off. */
  restartService?: (kind: 'redis' | 'mongo', how?: 'term' | 'kill') => Promise<void>;
  restartRedisEveryMs?: number;
  restartStoreEveryMs?: number;
  /** Freezes the upstream for that long (dev/chaos/simulator-process.ts); without it that fault is off. */
  pauseUpstream?: (ms: number) => Promise<void>;
  pauseUpstreamEveryMs?: number;
  /**
   * How gateways and workers are started: `node <script>` of the production build (dev/scripts/build.ts, as a
   * deployment runs them: each restart costs a fraction of tsx's start), or the sources through tsx (default).
   */
  compiled?: { gateway: string; worker: string };
  /** The final wait gives up when no task became final for this long (200 s: longer than the orphan sweep). */
  finalStallMs?: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  seed: number;
  seconds: number;
  figures: Record<string, number>;
  /** Every check of the run with its figure (each must be 0). */
  checks: Array<{ check: string; figure: string; value: number; ok: boolean }>;
  failures: string[];
}

/** The checks the run makes (issue 14 section 1), each a figure that must be 0 at the end. */
export const CHAOS_CHECKS: ReadonlyArray<[check: string, figure: string]> = [
  ['every task final', 'tasks_not_final'],
  ['every task reserved and settled once (or never reserved)', 'tasks_not_charged_once'],
  ['settlement journal drained into the ledger', 'journal_left'],
  ['per account: ledger == Redis projection', 'accounts_ledger_not_projection'],
  ['per account: balance == grants + top-ups - charges - held', 'accounts_balance_not_adding_up'],
  ['no open hold left', 'open_holds'],
  ['per key: spend in ledger == projection', 'key_spends_not_matching'],
  ['one usage row per answered call', 'calls_without_usage_row'],
  ['no usage row duplicated', 'usage_rows_duplicated'],
  ['every charge == its usage row cost', 'charges_not_matching_row'],
  ['every Idempotency-Key answered with one task', 'idempotency_keys_with_two_tasks'],
  ['no call served with a disabled key', 'disabled_key_served'],
  ['no 5xx (other than 502/503/504) while every service was up', 'http_5xx_outside_outages'],
  ['no API key, admin token or KEY_ENCRYPTION_KEY in any log line', 'secrets_in_logs'],
  ['no gateway or worker exited on its own (Redis and store restarts included)', 'unexpected_exits'],
];

/**
 * How long after a client's end its gateway may still be settling the call when Redis was down meanwhile
 * (a call cut short, or answered during the outage): the charge's write-ahead is retried about 10 s
 * through a Redis outage, then written to the ledger retried about 12 s through a store outage
 * (gateway/chat/settle.ts).
 */
const SETTLE_AFTER_CLIENT_MS = 30_000;
/** The same with every service up, for a call cut short: its settlement starts once the gateway sees the client gone. */
const SETTLE_AFTER_CUT_MS = 5_000;

interface Proc { name: string; kind: 'gateway' | 'worker'; port?: number; managed: Managed; killedAt?: number; replacing?: boolean }

const CHAT: Array<{ path: (stream: boolean) => string; body: (stream: boolean, text: string) => unknown; headers?: Record<string, string>; channels: string[] }> = [
  { path: () => '/v1/chat/completions', body: (stream, text) => ({ model: 'gpt-5.1', max_tokens: 12, stream, messages: [{ role: 'user', content: text }] }), channels: ['openai-a', 'openai-b'] },
  { path: () => '/v1/messages', headers: { 'anthropic-version': '2023-06-01' }, body: (stream, text) => ({ model: 'claude-sonnet-4-5', max_tokens: 12, stream, messages: [{ role: 'user', content: text }] }), channels: ['anthropic-a', 'anthropic-b'] },
  { path: () => '/v1/responses', body: (stream, text) => ({ model: 'gpt-5.1', max_output_tokens: 12, stream, input: text }), channels: ['openai-resp-a', 'openai-resp-b'] },
  { path: (stream) => (stream ? '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse' : '/v1beta/models/gemini-2.5-flash:generateContent'), body: (_s, text) => ({ contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: 12 } }), channels: ['gemini-a', 'gemini-b'] },
];

/** One async submission per media family; each body is a pure function of its prompt, so a replay sends the same body. */
const MEDIA: Array<{ family: string; path: string; body: (prompt: string) => unknown; channels: string[] }> = [
  { family: 'image', path: '/v1/images/generations', body: (prompt) => ({ model: 'gpt-image-1', prompt, async: true }), channels: ['openai-images-a', 'openai-images-b'] },
  { family: 'video', path: '/v1/videos/generations', body: (prompt) => ({ model: 'seedance-1-0-pro', content: [{ type: 'text', text: prompt }], duration: 5 }), channels: ['ark-video-a', 'ark-video-b'] },
  { family: 'music', path: '/v1/music/generations', body: (prompt) => ({ model: 'suno-v4-5', prompt: `[Verse]\n${prompt}`, title: 'Chaos', tags: 'lofi' }), channels: ['suno-a', 'suno-b'] },
  { family: 'speech', path: '/v1/audio/speech', body: (prompt) => ({ model: 'speech-2-5-hd', text: prompt, voice_id: 'male-qn-qingse', async: true }), channels: ['minimax-a', 'minimax-b'] },
];

/** Media upstream faults (dev/simulator/media/faults.ts): a task that fails or expires upstream, polls that fail, a refused submission. */
const MEDIA_FAULTS = [
  { type: 'fail' },
  { type: 'expire' },
  { type: 'poll_fail', count: 2 },
  { type: 'submit_status', status: 500 },
  { type: 'submit_reset' },
];

const FAULTS = [
  { type: 'status', status: 500 },
  { type: 'status', status: 503 },
  { type: 'reset' },
  { type: 'cut', after_chunks: 3 },
  { type: 'status', status: 429 },
];

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const rnd = mulberry32(opts.seed);
  const run = `${opts.seed.toString(36)}${randomBytes(3).toString('hex')}`;
  const mongo = new URL(opts.env.MONGO_URL);
  mongo.pathname = `/chaos_${run}`;
  // CHAOS_STORE_POOL: each process's connections to the store (the driver's default pool is 20).
  const pool = Number(process.env.CHAOS_STORE_POOL ?? 0);
  if (pool > 0) mongo.searchParams.set('maxPoolSize', String(pool));
  const env: Record<string, string> = {
    ...opts.env,
    MONGO_URL: mongo.toString(),
    REDIS_PREFIX: `chaos${run}:`,
    TEMPORAL_TASK_QUEUE: `chaos-${run}`,
    ADMIN_TOKEN: randomBytes(16).toString('hex'),
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    SIMULATOR_URL: opts.simulatorUrl,
    // Polls every 2 s (the production cadence of images and speech; video and music poll every 5 s): the
    // simulator's tasks take 0.3 to 1.5 s (dev/scripts/chaos.ts), so each async task is polled once, when it is
    // done. Each poll is a durable timer, a workflow task and a store read: at 1 s, videos and music were
    // polled twice, and the run's per-task cost grew with every task that waited behind another.
    MEDIA_POLL_INTERVAL_MS: process.env.CHAOS_MEDIA_POLL_MS ?? '2000',
    LOG_LEVEL: 'warn',
    // A production-mode gateway with top-ups on refuses to start without Stripe keys (docs/payments.md).
    TOPUPS_ENABLED: opts.env?.TOPUPS_ENABLED ?? process.env.TOPUPS_ENABLED ?? 'false',
  };
  const config = loadConfig({ ...process.env, ...env });
  const db = await connectStore(config.MONGO_URL);
  await seedCatalogue(db, readCatalogueFile(config.CATALOGUE_FILE));
  const logDir = path.resolve(`.data/chaos-${run}`);
  const figures: Record<string, number> = {
    chat_calls: 0, chat_streams: 0, chat_aborted: 0, chat_ok: 0, chat_lost_connection: 0, tasks_submitted: 0, idempotent_replays: 0,
    topups: 0, sim_faults: 0, media_faults: 0, worker_kills: 0, gateway_kills: 0, http_5xx_from_gateway: 0,
    unexpected_exits: 0, redis_restarts: 0, store_restarts: 0, upstream_pauses: 0, key_disables: 0, key_enables: 0, spend_cap_changes: 0,
    calls_refused_401: 0, calls_refused_402: 0,
  };
  for (const m of MEDIA) figures[`tasks_submitted_${m.family}`] = 0;
  const failures: string[] = [];

  let seq = 0;
  const spawnNode = async (kind: 'gateway' | 'worker', port?: number): Promise<Proc> => {
    const name = `${kind}-${++seq}`;
    const flags = kind === 'gateway' ? gatewayNodeFlags() : [];
    const args = opts.compiled ? [...flags, opts.compiled[kind]] : [...flags, '--import', 'tsx', kind === 'gateway' ? 'gateway/server.ts' : 'workers/main.ts'];
    const managed = spawnManaged({
      name, cmd: process.execPath, args,
      env: { ...process.env, ...env, ...(port ? { PORT: String(port) } : {}) }, logFile: path.join(logDir, `${name}.log`),
    });
    if (port) await waitForPort(port, managed, 60_000);
    return { name, kind, port, managed };
  };
  const gateways: Proc[] = [];
  const workers: Proc[] = [];
  for (let i = 0; i < 2; i++) gateways.push(await spawnNode('gateway', await freePort()));
  for (let i = 0; i < 2; i++) workers.push(await spawnNode('worker'));
  /**
   * A gateway or worker that exits without being killed (a crash on a store or Redis restart) is a
   * defect: counted, and replaced so the run goes on with two of each. Killed ones are replaced by
   * their fault loop; a replacement that fails to start is retried here.
   */
  let stopping = false;
  // Ctrl-C or SIGTERM: dev/scripts/lib/proc.ts stops every child; none is replaced then.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => { stopping = true; });
  const supervise = async () => {
    while (!stopping) {
      await new Promise((r) => setTimeout(r, 1000));
      for (const list of [gateways, workers]) {
        for (let i = 0; i < list.length; i++) {
          const p = list[i];
          if (stopping || p.replacing || !p.managed.done()) continue;
          if (p.killedAt === undefined) {
            const { code, signal } = await p.managed.exited;
            figures.unexpected_exits++;
            log(`  ${p.name} exited on its own (${signal ?? `code ${code}`}; ${p.managed.logFile}); starting another`);
          }
          p.replacing = true;
          try {
            list[i] = await spawnNode(p.kind, p.port);
          } catch (err) {
            log(`  could not start a ${p.kind}: ${String(err)}`);
            p.replacing = false;
          }
        }
      }
    }
  };
  const supervisor = supervise();
  const live = () => gateways.filter((g) => !g.managed.done() && g.killedAt === undefined);
  const base = () => `http://127.0.0.1:${pick(rnd, live()).port}`;
  /**
   * A gateway for one call, and whether it was killed while the call ran (its unsettled work died with it),
   * up to a time: the client's end for an answer it read to the end (the charge is durable before the
   * stream's last event, so a kill after that loses nothing), later for a call the client cut short.
   */
  const serve = () => {
    const g = pick(rnd, live());
    const started = Date.now();
    const diedBy = (until: number) => g.killedAt !== undefined && g.killedAt >= started && g.killedAt <= until;
    return { url: `http://127.0.0.1:${g.port}`, name: g.name, started, diedDuring: () => diedBy(Date.now()), diedBy };
  };
  /**
   * Chat calls whose gateway may still be settling them after the client's end: a call the client aborted
   * or lost (settled on what was delivered once the client is gone: within SETTLE_AFTER_CUT_MS, or
   * SETTLE_AFTER_CLIENT_MS if Redis went down meanwhile), and an answer that went out during a Redis
   * outage (it waits 1 s for its charge's write-ahead, then goes out while the charge is retried in the
   * background: gateway/chat/settle.ts; SETTLE_AFTER_CLIENT_MS). A kill of its gateway in that time may
   * rightly leave no row. Which calls qualify is known once the run is over (the outages' windows).
   */
  const settledLate: Array<{ trace: string; started: number; ended: number; cut: boolean; diedBy: (until: number) => boolean }> = [];

  const admin = async (method: string, p: string, body?: unknown) => {
    for (let i = 0; ; i++) {
      try {
        const r = await fetch(`${base()}/admin/v1${p}`, { method, headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: r.status, body: (await r.json().catch(() => null)) as any };
      } catch (err) {
        if (i >= 5) throw err;
        await new Promise((r) => setTimeout(r, 300));
      }
    }
  };
  const accounts: ChaosAccount[] = [];
  for (let i = 0; i < 3; i++) {
    const a = (await admin('POST', '/accounts', { name: `chaos-${i}` })).body;
    await admin('POST', `/accounts/${a.id}/topups`, { amount_usd: '1000' });
    const k = (await admin('POST', `/accounts/${a.id}/keys`, { name: 'chaos' })).body;
    // A second key with a small spend cap, disabled and enabled again on the schedule (spec 1 §1.3).
    const l = (await admin('POST', `/accounts/${a.id}/keys`, { name: 'chaos-limited', spend_cap_usd: '0.003' })).body;
    accounts.push({ id: a.id, keys: [{ id: k.id, key: k.key, disabledSince: null }, { id: l.id, key: l.key, disabledSince: null }] });
  }
  /** Service outages (Redis or store restarts, upstream pauses): a refusal then may rightly have no usage row. */
  const outages: Array<{ what: 'redis' | 'store' | 'upstream'; from: number; to: number }> = [];
  const inOutage = (from: number, to: number) => outages.some((o) => from <= o.to + 2_000 && to >= o.from);
  /** Calls served (2xx) with a key that was disabled for the whole call: each should have been a 401. */
  let disabledServed = 0;
  const disabledServedShown: string[] = [];

  /** Every answered call: its trace id and what to print if its usage row is missing. */
  const traces = new Map<string, string>();
  let t0 = Date.now();
  /** Answered calls that may rightly have no usage row: a 401 (no account to log it against) or a refusal during an outage. */
  const rowOptional = new Set<string>();
  const answered = (trace: string, status: number, started: number, what: string) => {
    traces.set(trace, `${status} ${what} at +${((started - t0) / 1000).toFixed(1)} s`);
    if (status === 401) figures.calls_refused_401++;
    if (status === 402) figures.calls_refused_402++;
    if (status === 401 || (status >= 500 && inOutage(started, Date.now()))) rowOptional.add(trace);
  };
  /** Disable or enable the limited key, or move its spend cap (the money checks cover its spend). */
  const keyAction = async (r: () => number, acct: ChaosAccount) => {
    const limited = acct.keys[1];
    const roll = r();
    if (roll < 0.5) {
      // Enables and disables of one key never overlap (spend-cap changes do, on purpose): with an enable and
      // a disable in flight together either may land last, and a call made after the disable's answer could
      // rightly be served. A call counts as made while disabled only if it started after the disable's answer
      // and no enable was requested before it ended.
      if (limited.toggling) return;
      limited.toggling = true;
      try {
        const enable = limited.disabledSince !== null;
        if (enable) limited.disabledSince = null;
        const res = await admin('PATCH', `/keys/${limited.id}`, { enabled: enable });
        if (res.status !== 200) return;
        if (enable) figures.key_enables++;
        else {
          limited.disabledSince = Date.now();
          figures.key_disables++;
        }
      } finally {
        limited.toggling = false;
      }
    } else {
      const cap = pick(r, ['0.001', '0.003', '0.01', '1']);
      if ((await admin('PATCH', `/keys/${limited.id}`, { spend_cap_usd: cap })).status === 200) figures.spend_cap_changes++;
    }
  };
  /** Chat latencies (answered 200s), for the figures. */
  const chatMs: number[] = [];
  /**
   * 5xx other than the upstream-facing 502/503/504: a defect, unless a service was down meanwhile
   * (then the call is counted apart). Checked after the run, when every outage window is known.
   */
  const serverErrors: Array<{ trace: string | null; from: number; to: number }> = [];
  const serverError = (trace: string | null, from: number) => {
    figures.http_5xx_from_gateway++;
    serverErrors.push({ trace, from, to: Date.now() });
  };
  /** Calls whose gateway was SIGKILLed while they ran: a row may rightly be missing (nothing was settled). */
  const diedWithGateway = new Set<string>();
  const idem = new Map<string, Set<string>>();
  const stopAt = Date.now() + opts.seconds * 1000;

  const client = async (ix: number) => {
    const r = mulberry32(opts.seed + ix * 7919);
    while (Date.now() < stopAt) {
      const acct = pick(r, accounts);
      const key = r() < 0.8 ? acct.keys[0] : acct.keys[1];
      const roll = r();
      try {
        if (roll < 0.04) {
          const m = pick(r, MEDIA);
          await fetch(`${opts.simulatorUrl}/_control/media/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ channel: pick(r, m.channels), fault: pick(r, MEDIA_FAULTS), times: 1 }) });
          figures.media_faults++;
        } else if (roll < 0.08) {
          const ch = pick(r, CHAT);
          await fetch(`${opts.simulatorUrl}/_control/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ channel: pick(r, ch.channels), fault: pick(r, FAULTS), times: 1 }) });
          figures.sim_faults++;
        } else if (roll < 0.8) {
          const ch = pick(r, CHAT);
          const stream = r() < 0.5;
          const abort = r() < 0.1;
          figures.chat_calls++;
          if (stream) figures.chat_streams++;
          const ac = new AbortController();
          if (abort) setTimeout(() => ac.abort(), Math.floor(r() * 30));
          const gwc = serve();
          const disabledBefore = key.disabledSince;
          let trace: string | null = null;
          let status = 0;
          let cut = '';
          try {
            const res = await fetch(gwc.url + ch.path(stream), {
              method: 'POST', signal: ac.signal,
              headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', ...ch.headers },
              body: JSON.stringify(ch.body(stream, `chaos ${ix} ${figures.chat_calls}`)),
            });
            status = res.status;
            trace = res.headers.get('x-gateway-trace');
            if (res.status >= 500 && res.status !== 502 && res.status !== 503 && res.status !== 504) serverError(trace, gwc.started);
            await res.text();
            if (res.status === 200) {
              figures.chat_ok++;
              chatMs.push(Date.now() - gwc.started);
            }
          } catch {
            cut = ac.signal.aborted ? 'client aborted' : 'connection lost';
            if (ac.signal.aborted) figures.chat_aborted++;
            else figures.chat_lost_connection++;
          }
          if (trace) answered(trace, status, gwc.started, `${ch.path(stream)} via ${gwc.name}${cut ? `, ${cut}` : ''}`);
          if (status >= 200 && status < 300 && disabledBefore !== null && key.disabledSince === disabledBefore) {
            disabledServed++;
            if (disabledServedShown.length < 5) disabledServedShown.push(`${trace} (key ${key.id} disabled ${gwc.started - disabledBefore} ms before the call, via ${gwc.name} at +${((gwc.started - t0) / 1000).toFixed(1)} s)`);
          }
          if (trace && gwc.diedDuring()) diedWithGateway.add(trace);
          else if (trace) settledLate.push({ trace, started: gwc.started, ended: Date.now(), cut: cut !== '', diedBy: gwc.diedBy });
        } else if (roll < 0.95) {
          // Idempotency keys are per account and per key (the main key only, so a replay is never refused as disabled).
          const replay = r() < 0.3 && idem.size > 0;
          const keyName = replay ? pick(r, [...idem.keys()].filter((k) => k.startsWith(acct.id))) : `${acct.id}:${pick(r, MEDIA).family}:idem-${ix}-${figures.tasks_submitted}`;
          if (!keyName) continue;
          const media = MEDIA.find((m) => m.family === keyName.split(':')[1])!;
          const body = media.body(`chaos ${keyName}`);
          if (replay) figures.idempotent_replays++;
          else {
            figures.tasks_submitted++;
            figures[`tasks_submitted_${media.family}`]++;
          }
          const gwc = serve();
          const res = await fetch(`${gwc.url}${media.path}`, {
            method: 'POST', headers: { authorization: `Bearer ${acct.keys[0].key}`, 'content-type': 'application/json', 'Idempotency-Key': keyName.split(':')[2] }, body: JSON.stringify(body),
          });
          const trace = res.headers.get('x-gateway-trace');
          if (res.status >= 500 && res.status !== 502 && res.status !== 503 && res.status !== 504) serverError(trace, gwc.started);
          // A replay answers the first call's result and is not a call of its own (no row of its own).
          if (trace && !replay) answered(trace, res.status, gwc.started, `${media.path} via ${gwc.name}`);
          if (trace && !replay && gwc.diedDuring()) diedWithGateway.add(trace);
          const j = (await res.json().catch(() => null)) as { id?: string } | null;
          if (res.status === 200 && j?.id) {
            if (!idem.has(keyName)) idem.set(keyName, new Set());
            idem.get(keyName)!.add(j.id);
          }
        } else if (roll < 0.97) {
          await keyAction(r, acct);
        } else {
          figures.topups++;
          await admin('POST', `/accounts/${acct.id}/topups`, { amount_usd: '200', reference: `chaos-${ix}-${figures.topups}` });
        }
      } catch {
        figures.chat_lost_connection++;
      }
    }
  };

  /**
   * The fault schedule: one loop per kind of fault, each on a fixed cadence (the first at 0.5 to 1.5
   * periods, then every period, whatever the previous fault took) and with a PRNG of its own, so the same
   * seed replays the same times and victims. Faults of different kinds may overlap (a worker killed
   * while Redis restarts), as in life.
   */
  const every = async (kind: number, periodMs: number | undefined, on: unknown, fire: (r: () => number) => Promise<void>) => {
    if (!on || !periodMs) return;
    const r = mulberry32((opts.seed ^ 0x9e3779b9) + kind * 104729);
    let next = Date.now() + periodMs * (0.5 + r());
    for (;;) {
      const wait = next - Date.now();
      if (Date.now() + Math.max(0, wait) >= stopAt) return;
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
      await fire(r).catch((err: unknown) => log(`  fault failed: ${String(err)}`));
      next += periodMs;
    }
  };
  /** SIGKILLs a running gateway or worker (the seeded one, or the other if that one is down) and starts another in its place. */
  const kill = async (list: Proc[], r: () => number) => {
    const first = Math.floor(r() * list.length);
    const i = [first, 1 - first].find((j) => !list[j].managed.done() && !list[j].replacing);
    if (i === undefined) return;
    const p = list[i];
    log(`  +${Math.round((Date.now() - t0) / 1000)} s fault: SIGKILL ${p.name}`);
    p.killedAt = Date.now();
    p.replacing = true;
    p.managed.child.kill('SIGKILL');
    figures[p.kind === 'gateway' ? 'gateway_kills' : 'worker_kills']++;
    await p.managed.exited;
    try {
      list[i] = await spawnNode(p.kind, p.port);
    } finally {
      p.replacing = false;
    }
  };
  /** Runs one outage-making fault and remembers its window. */
  const outage = async (service: 'redis' | 'store' | 'upstream', what: string, run: () => Promise<void>) => {
    const from = Date.now();
    log(`  +${Math.round((from - t0) / 1000)} s fault: ${what}`);
    try {
      await run();
    } finally {
      outages.push({ what: service, from, to: Date.now() });
    }
  };
  const faults = () => Promise.all([
    every(1, opts.killWorkerEveryMs ?? 20_000, true, (r) => kill(workers, r)),
    every(2, opts.killGatewayEveryMs ?? 60_000, true, (r) => kill(gateways, r)),
    every(3, opts.restartRedisEveryMs, opts.restartService, async () => {
      await outage('redis', 'restart Redis', () => opts.restartService!('redis'));
      figures.redis_restarts++;
    }),
    every(4, opts.restartStoreEveryMs, opts.restartService, async () => {
      await outage('store', 'SIGKILL and restart the store', () => opts.restartService!('mongo', 'kill'));
      figures.store_restarts++;
    }),
    every(5, opts.pauseUpstreamEveryMs, opts.pauseUpstream, async (r) => {
      const ms = 2_000 + Math.floor(r() * 3_000);
      await outage('upstream', `pause the upstream for ${ms} ms`, () => opts.pauseUpstream!(ms));
      figures.upstream_pauses++;
    }),
  ]);

  log(`chaos: seed ${opts.seed}, ${opts.seconds} s, 2 gateways + 2 workers, logs in ${logDir}`);
  t0 = Date.now();
  /** A line every 30 s while the traffic runs: how far it got and how many tasks are still open. */
  const progress = async () => {
    while (Date.now() < stopAt - 15_000) {
      await new Promise((r) => setTimeout(r, 30_000));
      // How long one small insert waits for the store's write lock now (the queue every task's writes join).
      const w0 = Date.now();
      const wrote = await db.conn.collection('chaos_store_probe').insertOne({ at: new Date() }).then(() => true, () => false);
      const writeMs = Date.now() - w0;
      // How long one lookup by _id in the largest collection takes (every task's settlement writes a row there by _id).
      const f0 = Date.now();
      const found = await db.Usage.findById('chaos_probe_none', { _id: 1 }).lean().then(() => true, () => false);
      const findMs = Date.now() - f0;
      const open = await countOpen(db).catch(() => NaN);
      const s = (Date.now() - t0) / 1000;
      log(`  +${Math.round(s)} s: ${figures.chat_calls} chat calls (${(figures.chat_calls / s).toFixed(1)}/s), ${figures.tasks_submitted} tasks (${(figures.tasks_submitted / s).toFixed(1)}/s), ${open} not final yet; one store insert ${wrote ? `${writeMs} ms` : 'failed'}, one usage row lookup by _id ${found ? `${findMs} ms` : 'failed'}`);
    }
  };
  await Promise.all([faults(), progress(), ...Array.from({ length: opts.clients ?? 8 }, (_, i) => client(i))]);
  await fetch(`${opts.simulatorUrl}/_control/faults`, { method: 'DELETE' }).catch(() => undefined);
  await fetch(`${opts.simulatorUrl}/_control/media/faults`, { method: 'DELETE' }).catch(() => undefined);
  const trafficS = (Math.min(Date.now(), stopAt) - t0) / 1000;
  figures.chat_per_s = Math.round((figures.chat_calls / trafficS) * 10) / 10;
  figures.tasks_per_s = Math.round((figures.tasks_submitted / trafficS) * 10) / 10;
  chatMs.sort((a, b) => a - b);
  figures.chat_p50_ms = chatMs[Math.floor(chatMs.length * 0.5)] ?? 0;
  figures.chat_p95_ms = chatMs[Math.floor(chatMs.length * 0.95)] ?? 0;
  const hard500 = serverErrors.filter((e) => !inOutage(e.from, e.to));
  figures.http_5xx_outside_outages = hard500.length;
  if (hard500.length) failures.push(`${hard500.length} 5xx answer(s) (not 502/503/504) while every service was up: ${hard500.slice(0, 5).map((e) => e.trace).join(', ')}`);
  figures.disabled_key_served = disabledServed;
  if (disabledServed) failures.push(`${disabledServed} call(s) with a disabled key were served: ${disabledServedShown.join('; ')}`);

  // Every task final (a killed worker's activities are retried by the survivors; a task whose gateway died
  // before its workflow started is resumed by the orphan sweep, 2 min + 1 min). The wait goes on while tasks
  // keep finishing: it ends when none is left, when none finished for `stallMs`, or at a cap that grows
  // with the tasks still open when the traffic stopped (240 s + 1 s a task).
  const open0 = await countOpen(db);
  const stallMs = opts.finalStallMs ?? 200_000;
  const capMs = 240_000 + open0 * 1000;
  const waitStart = Date.now();
  let open = open0;
  let lastDrop = Date.now();
  let lastLog = 0;
  log(`chaos: traffic stopped; waiting for ${open0} task(s) to be final (gives up after ${stallMs / 1000} s without progress or ${Math.round(capMs / 1000)} s)`);
  for (;;) {
    const now = await countOpen(db).catch(() => open);
    if (now < open) lastDrop = Date.now();
    open = now;
    if (open === 0 || Date.now() - lastDrop > stallMs || Date.now() - waitStart > capMs) break;
    if (Date.now() - lastLog >= 10_000) {
      lastLog = Date.now();
      const states = await db.Task.aggregate<{ _id: string; n: number }>([{ $match: { state: { $nin: [...FINAL_STATES] } } }, { $group: { _id: '$state', n: { $sum: 1 } } }]).catch(() => []);
      log(`  waiting ${Math.round((Date.now() - waitStart) / 1000)} s: ${open} task(s) not final (${states.map((x) => `${x._id} ${x.n}`).join(', ')})`);
    }
    // A count reads the whole tasks collection on FerretDB: not too often, it takes CPU from the workers.
    await new Promise((r) => setTimeout(r, 5000));
  }
  figures.final_wait_s = Math.round((Date.now() - waitStart) / 1000);
  figures.tasks_not_final = open;
  if (open) failures.push(`${open} task(s) not final after ${figures.final_wait_s} s (${open0} were open when the traffic stopped)`);
  // Gateways and workers stop cleanly (pending settlements drained), then the books are checked.
  stopping = true;
  await supervisor;
  for (const p of [...gateways, ...workers]) await p.managed.stop(20_000);
  // Redis counts as down until 2 s after its restart returned (the clients' reconnection), as in inOutage.
  const redisDown = (from: number, to: number) => outages.some((o) => o.what === 'redis' && from <= o.to + 2_000 && to >= o.from);
  for (const c of settledLate) {
    const settling = c.cut
      ? (redisDown(c.started, c.ended + SETTLE_AFTER_CUT_MS) ? SETTLE_AFTER_CLIENT_MS : SETTLE_AFTER_CUT_MS)
      : redisDown(c.started, c.ended) ? SETTLE_AFTER_CLIENT_MS : 0;
    if (settling && c.diedBy(c.ended + settling)) diedWithGateway.add(c.trace);
  }
  await check({ db, env, accounts, traces, rowOptional, diedWithGateway, idem, figures, failures });
  scanLogs(logDir, [
    ...accounts.flatMap((a) => a.keys.map((k) => [`key ${k.id}`, k.key] as [string, string])),
    ['ADMIN_TOKEN', env.ADMIN_TOKEN], ['KEY_ENCRYPTION_KEY', env.KEY_ENCRYPTION_KEY],
  ], figures, failures);
  await db.conn.dropDatabase().catch(() => undefined);
  await db.conn.close();
  const checks = CHAOS_CHECKS.map(([check, figure]) => ({ check, figure, value: figures[figure] ?? NaN, ok: figures[figure] === 0 }));
  // A check whose figure was never computed (the run stopped early) is a failure too, and so is every
  // figure that is not 0: some are only counted (a gateway that exited on its own was reported, and the
  // run passed), the rest add this summary to their own lines.
  for (const c of checks) {
    if (Number.isNaN(c.value)) failures.push(`${c.check}: not checked`);
    else if (!c.ok) failures.push(`${c.check}: ${c.value}`);
  }
  return { seed: opts.seed, seconds: opts.seconds, figures, checks, failures };
}

/** Every line the gateways and workers wrote during the run: no API key plaintext, no admin token, no KEY_ENCRYPTION_KEY. */
function scanLogs(dir: string, secrets: Array<[string, string]>, figures: Record<string, number>, failures: string[]): void {
  let lines = 0;
  let found = 0;
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.log'))) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    lines += text.split('\n').length - 1;
    for (const [what, secret] of secrets) {
      if (!text.includes(secret)) continue;
      found++;
      failures.push(`${what} written in ${f}`);
    }
  }
  figures.log_lines_scanned = lines;
  figures.secrets_in_logs = found;
}

function countOpen(db: Db): Promise<number> {
  return db.Task.countDocuments({ state: { $nin: [...FINAL_STATES] } });
}

async function check(s: {
  db: Db; env: Record<string, string>; accounts: ChaosAccount[]; traces: Map<string, string>; rowOptional: Set<string>; diedWithGateway: Set<string>;
  idem: Map<string, Set<string>>; figures: Record<string, number>; failures: string[];
}): Promise<void> {
  const { db, figures, failures } = s;
  const redis = connectRedis(s.env.REDIS_URL, s.env.REDIS_PREFIX, s.env.REDIS_CLUSTER_NODES);
  const wallet = new Wallet(db, redis, createLogger('warn'));
  try {
    // The journal: everything written ahead reaches the ledger (entries a killed gateway held are taken over).
    const until = Date.now() + 60_000;
    for (;;) {
      await wallet.journal.flush();
      const left = await wallet.journal.pending();
      if (left === 0 || Date.now() > until) {
        figures.journal_left = left;
        if (left) failures.push(`${left} journal entries never reached the ledger`);
        break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    figures.journal_drained_by_checker = wallet.journal.stats.drained;

    let moneyChecked = 0;
    for (const a of s.accounts) {
      const rows = await db.Ledger.find({ account_id: a.id }).lean();
      const sum = (kind?: string) => rows.filter((r) => !kind || r.kind === kind).reduce((t, r) => t + r.amount_nano, 0);
      const ledger = sum();
      const projected = Number(await redis.get(accountRedisKeys.balance(a.id)));
      const grants = sum('grant') + sum('topup') + sum('adjust');
      const charges = -sum('charge');
      const reserves = rows.filter((r) => r.kind === 'reserve');
      const settled = new Set(rows.filter((r) => r.kind === 'settle').map((r) => r.ref));
      const openHolds = reserves.filter((r) => !settled.has(r.ref));
      const held = -reserves.reduce((t, r) => t + r.amount_nano, 0) - sum('settle');
      figures.accounts_ledger_not_projection ??= 0;
      figures.accounts_balance_not_adding_up ??= 0;
      figures.key_spends_not_matching ??= 0;
      if (ledger !== projected) {
        figures.accounts_ledger_not_projection++;
        failures.push(`${a.id}: ledger ${ledger} != projection ${projected}`);
      }
      if (ledger !== grants - charges - held) {
        figures.accounts_balance_not_adding_up++;
        failures.push(`${a.id}: balance ${ledger} != grants ${grants} - charges ${charges} - held ${held}`);
      }
      if (openHolds.length) {
        const shown = await Promise.all(openHolds.slice(0, 5).map(async (h) => {
          const task = await db.Task.findById(h.ref, { state: 1 }).lean<{ state: string }>();
          return `${h.ref} (${task ? `task ${task.state}` : 'no task'}, recorded ${h.recorded_at?.toISOString() ?? '?'})`;
        }));
        failures.push(`${a.id}: ${openHolds.length} open hold(s) left: ${shown.join('; ')}`);
      }
      for (const k of a.keys) {
        const keySpend = rows.filter((r) => r.key_id === k.id).reduce((t, r) => t + r.key_spend_nano, 0);
        const projectedSpend = Number((await redis.get(accountRedisKeys.keySpend(a.id, k.id))) ?? 0);
        if (keySpend !== projectedSpend) figures.key_spends_not_matching++;
        if (keySpend !== projectedSpend) failures.push(`${a.id}: key ${k.id} spend in ledger ${keySpend} != projection ${projectedSpend}`);
      }
      figures.ledger_rows = (figures.ledger_rows ?? 0) + rows.length;
      figures.charges_nano = (figures.charges_nano ?? 0) + charges;
      figures.open_holds = (figures.open_holds ?? 0) + openHolds.length;
      moneyChecked++;
    }
    figures.accounts_checked = moneyChecked;

    // One usage row per public call the client saw an answer to, and every charge equal to its row's cost.
    const usage = await db.Usage.find({ account_id: { $in: s.accounts.map((a) => a.id) } }, { _id: 1, request_id: 1, cost_nano: 1, status: 1, task_id: 1 }).lean();
    const byRequest = new Map(usage.map((u) => [u.request_id, u]));
    figures.usage_rows = usage.length;
    let missing = 0;
    let lostWithGateway = 0;
    let refusedWithoutRow = 0;
    const missingShown: string[] = [];
    for (const [t, what] of s.traces) {
      if (byRequest.has(t)) continue;
      if (s.diedWithGateway.has(t)) lostWithGateway++;
      else if (s.rowOptional.has(t)) refusedWithoutRow++;
      else {
        missing++;
        if (missingShown.length < 5) missingShown.push(`${t} (${what})`);
      }
    }
    figures.calls_refused_without_row = refusedWithoutRow;
    figures.calls_answered = s.traces.size;
    figures.calls_cut_by_gateway_kill_without_row = lostWithGateway;
    figures.calls_without_usage_row = missing;
    if (missing) failures.push(`${missing} answered call(s) without a usage row: ${missingShown.join('; ')}`);
    // None duplicated: one row per request id (a retried write must not add a second).
    const perRequest = new Map<string, number>();
    for (const u of usage) perRequest.set(u.request_id, (perRequest.get(u.request_id) ?? 0) + 1);
    const duplicated = [...perRequest].filter(([, n]) => n > 1);
    figures.usage_rows_duplicated = duplicated.length;
    if (duplicated.length) failures.push(`${duplicated.length} request(s) with more than one usage row: ${duplicated.slice(0, 5).map(([id, n]) => `${id} x${n}`).join(', ')}`);
    const charges = await db.Ledger.find({ kind: 'charge', account_id: { $in: s.accounts.map((a) => a.id) } }).lean();
    let wrong = 0;
    for (const c of charges) if (byRequest.get(c.ref!)?.cost_nano !== -c.amount_nano) wrong++;
    figures.charges = charges.length;
    figures.charges_not_matching_row = wrong;
    if (wrong) failures.push(`${wrong} charge(s) differ from their usage row's cost`);

    // Tasks: final, reserved once and settled once; each Idempotency-Key answered with one task.
    // Every task of the run (those whose submitter never heard back included): reserved and settled once,
    // or never reserved at all (a task that could not start).
    const tasks = await db.Task.find({ account_id: { $in: s.accounts.map((a) => a.id) } }, { _id: 1, state: 1 }).lean();
    figures.tasks = tasks.length;
    const ledgerByTask = await db.Ledger.find({ ref: { $in: tasks.map((t) => t._id) } }, { _id: 1, kind: 1, ref: 1 }).lean();
    let badTasks = 0;
    for (const t of tasks) {
      const ops = ledgerByTask.filter((o) => o.ref === t._id).map((o) => o.kind).sort().join(',');
      if (ops !== 'reserve,settle' && ops !== '') badTasks++;
      if (ops !== 'reserve,settle' && ops !== '') failures.push(`task ${t._id} (${t.state}): ledger ops ${ops}`);
    }
    figures.tasks_not_charged_once = badTasks;

    const splitKeys = [...s.idem.values()].filter((ids) => ids.size !== 1).length;
    figures.idempotency_keys = s.idem.size;
    figures.idempotency_keys_with_two_tasks = splitKeys;
    if (splitKeys) failures.push(`${splitKeys} Idempotency-Key(s) answered with more than one task`);
  } finally {
    await wallet.journal.stop(1000);
    redis.disconnect();
  }
}

interface ChaosKey { id: string; key: string; disabledSince: number | null; toggling?: boolean }
interface ChaosAccount { id: string; keys: [ChaosKey, ChaosKey] }
