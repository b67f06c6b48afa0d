/**
 * `npm run record:histories`: re-record the workflow histories that
 * test/workflows/replay.test.ts replays (docs/workflow-changes.md).
 *
 * Starts a throw-away stack (Temporal dev server, FerretDB, Redis on free
 * ports), one in-process gateway with its simulator and worker, runs every
 * workflow type and path through the gateway's own API (or, for workflows the
 * worker starts itself, through the Temporal client as the worker does) and
 * writes each history to test/workflows/histories/<workflowType>/<case>.json
 * (test/workflows/history-files.ts says in what form).
 *
 *   npm run record:histories                 every case
 *   npm run record:histories -- music image  only cases whose name contains one of the words
 *   HISTORIES_DIR=/tmp/h npm run record:histories   somewhere else (the default keeps files of other cases)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startServices, type Services } from './lib/services';
import { ensureTools } from './lib/tools';
import { stopAll } from './lib/proc';
import { scratchDir } from './lib/scratch';
import { taskWebhookWorkflowId } from '../../domain/workflow-ids';
import { HISTORIES_DIR, historyToFile } from '../../test/workflows/history-files';

const root = fileURLToPath(new URL('../..', import.meta.url));
const OUT = path.resolve(process.env.HISTORIES_DIR ?? HISTORIES_DIR);
const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
/** A task of the expiry cases runs this long before it expires (the production lifetimes are minutes). */
const MAX_RUN_MS = 3_000;

const { startGateway } = await import('../../test/helpers/stack');
type Gateway = Awaited<ReturnType<typeof startGateway>>;

interface Family {
  name: string;
  path: string;
  body: Record<string, unknown>;
  channels: string[];
  /** The upstream answers in the submission (no poll): no expiry path (the lifetime is checked between polls). */
  sync?: boolean;
  /** Only submissions whose upstream path contains this text get the fault. */
  match?: string;
  /** The family has a lifetime after which the gateway expires the task (domain/media/cadence.ts MAX_RUN_MS). */
  lifetime?: boolean;
}

const three = (p: string) => ['a', 'b', 'c'].map((x) => `${p}-${x}`);
/** One entry per media family the gateway serves (data/catalogue.json), with a valid body each. */
const FAMILIES: Family[] = [
  { name: 'image-sync', path: '/v1/images/generations', body: { model: 'gpt-image-1', prompt: 'a red fox' }, channels: three('openai-images'), sync: true },
  { name: 'image-seedream', path: '/v1/images/generations', body: { model: 'seedream-4-0', prompt: 'a red fox' }, channels: three('seedream-images'), sync: true },
  { name: 'image-task', path: '/v1/images/generations', body: { model: 'flux-kontext-pro', prompt: 'a red fox', async: true }, channels: three('image-tasks'), lifetime: true },
  { name: 'image-grid', path: '/v1/images/generations', body: { model: 'midjourney-v7', prompt: 'a lighthouse at dusk', async: true }, channels: three('mj'), lifetime: true },
  { name: 'video', path: '/v1/videos/generations', body: { model: 'seedance-1-0-pro', content: [{ type: 'text', text: 'a cat surfing a wave' }] }, channels: three('ark-video') },
  {
    name: 'digital-human', path: '/v1/videos/generations', channels: three('dh'),
    body: { model: 'dh-lipsync', source_video_url: 'https://cdn.example.com/source.mp4?dur=9', audio_url: 'https://cdn.example.com/speech.mp3?dur=7', duration: 15 },
  },
  { name: 'avatar', path: '/v1/videos/avatars', body: { name: 'Anna studio', source_url: 'https://cdn.example.com/anna.jpg' }, channels: three('dh'), match: '/dh/v1/' },
  { name: 'music', path: '/v1/music/generations', body: { model: 'suno-v4-5', prompt: '[Verse]\nNeon rain on the harbour', title: 'Harbour Lights', tags: 'synthwave' }, channels: three('suno') },
  { name: 'speech', path: '/v1/audio/speech', body: { model: 'speech-2-5-hd', text: 'The quick brown fox jumps over the lazy dog.', voice_id: 'male-qn-qingse' }, channels: three('minimax'), sync: true, match: '/v1/t2a_v2' },
  { name: 'voice-clone', path: '/v1/audio/voices', body: { audio_url: 'https://cdn.example.com/my-voice.mp3', name: 'My narrator' }, channels: three('minimax'), match: '/v1/voice_clone' },
  { name: 'transcript', path: '/v1/transcripts/extract', body: { url: 'https://v.example.com/share/abc123?dur=20&lang=en' }, channels: three('dh'), sync: true, match: '/dh/v1/transcripts' },
];

const written: string[] = [];
const skipped: string[] = [];
let services: Services | undefined;
let gw: Gateway | undefined;
try {
  const dataDir = scratchDir('record-histories');
  await ensureTools({ need: { temporal: true, ferretdb: true, redis: true }, log: () => undefined });
  services = await startServices({ dataDir, ports: { temporal: 27233, temporalUi: 28233, mongo: 47017, redis: 26379 }, portFallback: true, mongoDb: 'record', log: () => undefined });
  Object.assign(process.env, services.env, { DEPLOYMENT_MODE: 'test' });
  gw = await startGateway({
    MEDIA_MAX_RUN_MS: String(MAX_RUN_MS),
    BATCH_LINE_CONCURRENCY: '4', // a cancel lands while lines are still waiting
    WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETRY_INITIAL_MS: '200', WEBHOOK_RETRY_MAX_INTERVAL_MS: '1000', WEBHOOK_RETRY_WINDOW_MS: '3000',
  }, { simulator: true, worker: true, mediaDelayMs: 0 });
  const client = gw.deps.temporal;
  const enterprise = await gw.newAccount({ enterprise: true });
  const key = (await gw.newKey(enterprise.id)).key;

  for (const f of FAMILIES) {
    await runCase(`${f.name}-succeeded`, async () => [await finalTask(gw!, client, key, f)]);
    await runCase(`${f.name}-failed-refunded`, async () => {
      for (const channel of f.channels) await fault(gw!, channel, { type: 'fail' }, f.match);
      try {
        return [await finalTask(gw!, client, key, f)];
      } finally {
        await gw!.control('DELETE', '/media/faults');
      }
    });
    if (!f.sync) {
      await runCase(`${f.name}-expired`, async () => {
        // Images have a lifetime (280 s; MEDIA_MAX_RUN_MS here): the gateway expires a task the vendor never ends.
        // The other families have none: the vendor expires the task (the same refund, another outcome).
        for (const channel of f.channels) await fault(gw!, channel, { type: f.lifetime ? 'hang' : 'expire' }, f.match);
        try {
          return [await finalTask(gw!, client, key, f)];
        } finally {
          await gw!.control('DELETE', '/media/faults');
        }
      });
    }
    await runCase(`${f.name}-cancelled`, async () => {
      // Async: the vendor's task never ends; sync: its answer takes 2 s. Cancelled (as from the Temporal UI) meanwhile.
      for (const channel of f.channels) await fault(gw!, channel, f.sync ? { type: 'delay', ms: 2_000 } : { type: 'hang' }, f.match);
      try {
        const t0 = Date.now();
        const pending = submit(gw!, key, f);
        const id = await newestTaskId(gw!, t0);
        await waitForWorkflow(client, id);
        await sleep(f.sync ? 500 : 400);
        await client.workflow.getHandle(id).cancel();
        await withTimeout(client.workflow.getHandle(id).result().catch(() => undefined), 60_000, `task ${id}`);
        await withTimeout(pending.catch(() => undefined), 30_000, 'the submission');
        return [id];
      } finally {
        await gw!.control('DELETE', '/media/faults');
      }
    });
  }

  // A task with a callback_url: the webhook workflow (an abandoned child) delivers after two refusals; another never delivers.
  await gw.admin('POST', `/accounts/${enterprise.id}/webhook-secret`);
  await runCase('webhook-delivered-after-retries', async () => {
    const rx = await receiver((n) => (n <= 2 ? 500 : 200));
    try {
      const id = await finalTask(gw!, client, key, { ...FAMILIES[2], body: { ...FAMILIES[2].body, callback_url: rx.url } });
      await withTimeout(client.workflow.getHandle(taskWebhookWorkflowId(id)).result(), 60_000, 'the webhook');
      return [id, taskWebhookWorkflowId(id)];
    } finally {
      await rx.close();
    }
  });
  await runCase('webhook-failed', async () => {
    const rx = await receiver(() => 503);
    try {
      const id = await finalTask(gw!, client, key, { ...FAMILIES[2], body: { ...FAMILIES[2].body, callback_url: rx.url } });
      await withTimeout(client.workflow.getHandle(taskWebhookWorkflowId(id)).result(), 60_000, 'the webhook');
      return [taskWebhookWorkflowId(id)];
    } finally {
      await rx.close();
    }
  });

  // Knowledge: a build that publishes, one whose document cannot be read, and the sweep of a deleted team base.
  await runCase('kb-build-succeeded', async () => {
    const up = await gw!.admin('POST', `/accounts/${enterprise.id}/kbs/default/documents`, { filename: 'handbook.md', content: '# Leave\n\nTwenty days a year.\n\n# Travel\n\nBook through the portal.' });
    await withTimeout(client.workflow.getHandle(up.body.id).result(), 60_000, 'the build');
    return [up.body.id];
  });
  await runCase('kb-build-failed', async () => {
    const broken = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200, 7)]);
    const up = await gw!.admin('POST', `/accounts/${enterprise.id}/kbs/default/documents`, { filename: 'broken.pdf', content: broken.toString('base64'), base64: true });
    await withTimeout(client.workflow.getHandle(up.body.id).result(), 60_000, 'the build');
    return [up.body.id];
  });
  await runCase('kb-sweep', async () => {
    const made = await gw!.admin('POST', `/accounts/${enterprise.id}/kbs`, { kb_id: 'handbook', name: 'Handbook', readers: 'all' });
    if (made.status !== 201 && made.status !== 200) throw new Error(`team base not made: ${JSON.stringify(made.body)}`);
    const up = await gw!.admin('POST', `/accounts/${enterprise.id}/kbs/handbook/documents`, { filename: 'a.md', content: '# A\n\nText.' });
    await withTimeout(client.workflow.getHandle(up.body.id).result(), 60_000, 'the build');
    await gw!.admin('DELETE', `/accounts/${enterprise.id}/kbs/handbook`);
    const id = `kb-sweep:${enterprise.id}/handbook`;
    await withTimeout(client.workflow.getHandle(id).result(), 60_000, 'the sweep');
    return [id];
  });

  // Started by the worker / an operator, not by the gateway: started here the same way.
  await runCase('link-sweeper', async () => {
    const id = `media-link-sweeper-record-${Date.now()}`;
    const h = await client.workflow.start('linkSweeperWorkflow', { taskQueue: gw!.config.TEMPORAL_TASK_QUEUE, workflowId: id, args: [{ intervalMs: 300 }] });
    await sleep(1_500);
    const file = await save(client, id, 'link-sweeper-rounds'); // an open history: three rounds of a sweeper that never ends
    await h.terminate('recorded');
    return file;
  });
  await runCase('wallet-audit', async () => {
    const id = `audit-record-${Date.now()}`;
    await client.workflow.execute('auditWalletWorkflow', { taskQueue: gw!.config.TEMPORAL_TASK_QUEUE, workflowId: id, args: [{ accountId: enterprise.id, repair: false }] });
    return [id];
  });
  await runCase('wallet-audit-repair', async () => {
    const id = `audit-repair-record-${Date.now()}`;
    await client.workflow.execute('auditWalletWorkflow', { taskQueue: gw!.config.TEMPORAL_TASK_QUEUE, workflowId: id, args: [{ accountId: enterprise.id, repair: true }] });
    return [id];
  });
  await runCase('bench-noop', async () => {
    const id = `bench-noop-record-${Date.now()}`;
    await client.workflow.execute('benchNoopWorkflow', { taskQueue: gw!.config.TEMPORAL_TASK_QUEUE, workflowId: id });
    return [id];
  });

  // Batches (capabilities/batches/, docs/batches.md): OpenAI Files + Batches and Anthropic Message Batches, through the official SDKs.
  const payer = await gw.newAccount();
  await gw.admin('POST', `/accounts/${payer.id}/topups`, { amount_usd: '100' });
  const payerKey = (await gw.newKey(payer.id)).key;
  const openai = new OpenAI({ apiKey: payerKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: payerKey, baseURL: gw.url, maxRetries: 0 });
  const chatLines = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => JSON.stringify({
    custom_id: `${prefix}-${i}`, method: 'POST', url: '/v1/chat/completions',
    body: { model: 'gpt-5.1', max_tokens: 8, messages: [{ role: 'user', content: `question ${i}` }] },
  })).join('\n');
  await runCase('batch-openai-completed', async () => {
    const file = await openai.files.create({ file: await toFile(Buffer.from(chatLines(3, 'line')), 'in.jsonl'), purpose: 'batch' });
    const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await withTimeout(client.workflow.getHandle(batch.id).result(), 60_000, 'the batch');
    const done = await openai.batches.retrieve(batch.id);
    if (done.status !== 'completed' || done.request_counts?.completed !== 3) throw new Error(`batch ended ${done.status} ${JSON.stringify(done.request_counts)}`);
    return [batch.id];
  });
  await runCase('batch-openai-cancelled', async () => {
    // Slow lines (4 at a time): the cancel lands mid-slice; lines not started are never sent.
    await gw!.control('POST', '/latency', { ttft_ms: 300, token_delay_ms: 0 });
    try {
      const file = await openai.files.create({ file: await toFile(Buffer.from(chatLines(40, 'slow')), 'slow.jsonl'), purpose: 'batch' });
      const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await sleep(800);
      await openai.batches.cancel(batch.id);
      await withTimeout(client.workflow.getHandle(batch.id).result(), 60_000, 'the batch');
      const done = await openai.batches.retrieve(batch.id);
      if (done.status !== 'cancelled') throw new Error(`batch ended ${done.status}, not cancelled`);
      return [batch.id];
    } finally {
      await gw!.control('POST', '/latency', { ttft_ms: 0, token_delay_ms: 0 });
    }
  });
  await runCase('batch-anthropic-ended', async () => {
    const created = await anthropic.messages.batches.create({
      requests: [
        ...Array.from({ length: 2 }, (_, i) => ({ custom_id: `ok-${i}`, params: { model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user' as const, content: `hi ${i}` }] } })),
        { custom_id: 'bad-model', params: { model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user' as const, content: 'x' }] } },
      ],
    });
    await withTimeout(client.workflow.getHandle(created.id).result(), 60_000, 'the message batch');
    const ended = await anthropic.messages.batches.retrieve(created.id);
    if (ended.processing_status !== 'ended' || ended.request_counts.succeeded !== 2) throw new Error(`message batch ${ended.processing_status} ${JSON.stringify(ended.request_counts)}`);
    return [created.id];
  });

  /** One case: its workflows' histories are saved as `<type>/<case>[-<n>].json`. */
  async function runCase(name: string, run: () => Promise<string[] | { saved: string }>): Promise<void> {
    if (only.length > 0 && !only.some((w) => name.includes(w))) return;
    const t0 = Date.now();
    try {
      const ids = await run();
      if ('saved' in ids) written.push(ids.saved);
      else for (const [i, id] of ids.entries()) written.push((await save(client, id, ids.length > 1 && i > 0 ? `${name}-${i}` : name)).saved);
      console.log(`  ✔ ${name} (${Date.now() - t0} ms)`);
    } catch (err) {
      skipped.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
      console.log(`  ✘ ${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
} finally {
  await gw?.close().catch(() => undefined);
  await services?.stop();
  await stopAll();
}
console.log(`\n${written.length} histories written to ${path.relative(root, OUT)}`);
if (skipped.length > 0) {
  console.log(`${skipped.length} cases not recorded:\n  ${skipped.join('\n  ')}`);
  process.exit(1);
}

// ---------------------------------------------------------------------------

async function save(client: Client, workflowId: string, name: string): Promise<{ saved: string }> {
  const handle = client.workflow.getHandle(workflowId);
  const { type } = await handle.describe();
  const history = await handle.fetchHistory();
  const dir = path.join(OUT, type);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, historyToFile(history));
  return { saved: path.relative(root, file) };
}

async function submit(g: Gateway, key: string, f: Family): Promise<{ id: string; status: number }> {
  const submitted = Date.now();
  const r = await fetch(`${g.url}${f.path}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(f.body),
  });
  const body = (await r.json()) as { id?: string; task_id?: string };
  const id = body.id ?? body.task_id;
  // A sync answer (images, speech, transcripts) is the result, not the task: the task is the newest one.
  if (!id?.startsWith('task_')) return { id: await newestTaskId(g, submitted), status: r.status };
  return { id, status: r.status };
}

/** Submit and wait for the task's workflow to end; its task id (= workflow id). */
async function finalTask(g: Gateway, client: Client, key: string, f: Family): Promise<string> {
  const { id } = await submit(g, key, f);
  await withTimeout(client.workflow.getHandle(id).result().catch(() => undefined), 60_000, `task ${id}`);
  return id;
}

/** The newest task (cases run one at a time on their own database) created since `since`. */
async function newestTaskId(g: Gateway, since: number): Promise<string> {
  for (;;) {
    const doc = await g.deps.db.Task.findOne({}).sort({ created_at: -1 }).lean<{ _id: string; created_at: Date }>();
    if (doc && doc.created_at.getTime() >= since) return doc._id;
    if (Date.now() - since > 10_000) throw new Error('the task was not created');
    await sleep(50);
  }
}

/** Some families call the vendor before the workflow starts (a voice clone's upload): the cancel waits for it. */
async function waitForWorkflow(client: Client, id: string): Promise<void> {
  for (let i = 0; ; i++) {
    const found = await client.workflow.getHandle(id).describe().then(() => true, () => false);
    if (found) return;
    if (i > 200) throw new Error(`no workflow ${id} after 10 s`);
    await sleep(50);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

async function fault(g: Gateway, channel: string, f: Record<string, unknown>, match?: string): Promise<void> {
  await g.control('POST', '/media/faults', { channel, fault: f, ...(match ? { match } : {}) });
}

async function receiver(answer: (n: number) => number): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(answer(++n)).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
