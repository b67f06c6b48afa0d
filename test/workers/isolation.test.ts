// Issue 22 item 1: media tasks, knowledge builds and webhook deliveries on their own task queues, each
// served by its own worker process (`workers/main.ts --queue=...`, as `npm run dev` and docker-compose
// run them), each with its own metrics port. A knowledge worker held still (SIGSTOP, as a worker whose
// event loop a build holds) with builds on it: another account's media task still completes.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { startGateway, type TestGateway } from '../helpers/stack';
import { freePort } from '../../dev/scripts/lib/proc';
import { bundleWorkflows } from '../../dev/scripts/bundle-workflows';
import { QUEUE_SLOTS } from '../../workers/queues';
import { WORKER_QUEUES, type WorkerQueue } from '../../domain/task-queues';
import { parseProm, valueOf, seriesOf } from '../observability/prom-text';
import { uploadJson, waitBuild } from '../knowledge/kit';

let bundle: string;
test.before(async () => {
  bundle = process.env.WORKFLOW_BUNDLE ?? (await bundleWorkflows(`.data/isolation-bundle-${process.pid}.js`));
});

interface WorkerProc { queue: WorkerQueue; child: ChildProcess; metricsUrl: string }

async function startWorker(gw: TestGateway, queue: WorkerQueue): Promise<WorkerProc> {
  const c = gw.config;
  const port = await freePort();
  const env = {
    ...process.env,
    WORKFLOW_BUNDLE: bundle,
    MONGO_URL: c.MONGO_URL, REDIS_URL: c.REDIS_URL, REDIS_PREFIX: c.REDIS_PREFIX, TEMPORAL_ADDRESS: c.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: c.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: c.ADMIN_TOKEN, KEY_ENCRYPTION_KEY: c.KEY_ENCRYPTION_KEY,
    SIMULATOR_URL: c.SIMULATOR_URL, MEDIA_POLL_INTERVAL_MS: '100', LOG_LEVEL: 'warn', METRICS_PORT: String(port),
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts', `--queue=${queue}`], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const metricsUrl = `http://127.0.0.1:${port}/metrics`;
  // Up once its metrics answer with its worker's slots (the worker is created by then).
  for (let i = 0; ; i++) {
    const text = await fetch(metricsUrl, { signal: AbortSignal.timeout(2000) }).then((r) => r.text(), () => '');
    if (text.includes('gateway_temporal_worker_slots_max')) break;
    if (i > 1200 || child.exitCode !== null) throw new Error(`${queue} worker did not start (exit ${child.exitCode})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { queue, child, metricsUrl };
}

/** A document of `sections` sections (small: the test is about where builds run, not how fast). */
const manual = (name: string, sections: number) =>
  [`# ${name}`, '', ...Array.from({ length: sections }, (_, i) => [`## ${name} part ${i}`, '', `Part ${i} of ${name}: ${'how the service is run, written out in full. '.repeat(30)}`, '']).flat()].join('\n');

test('three worker processes, one per queue: own metrics port, own slots; a media task completes while the knowledge worker is held with builds on it', async (t) => {
  t.timeout(400_000);
  const gw = await startGateway({}, { simulator: true });
  const workers: WorkerProc[] = [];
  try {
    for (const queue of WORKER_QUEUES) workers.push(await startWorker(gw, queue));

    // Each answers on its own port, labelled with its queue, with its queue's slots and the event-loop series.
    for (const w of workers) {
      const samples = parseProm(await (await fetch(w.metricsUrl)).text());
      t.is(valueOf(samples, 'gateway_temporal_worker_slots_max', { kind: 'activity', queue: w.queue }), QUEUE_SLOTS[w.queue].activities, w.queue);
      t.is(valueOf(samples, 'gateway_temporal_worker_slots_max', { kind: 'workflow', queue: w.queue }), QUEUE_SLOTS[w.queue].workflowTasks, w.queue);
      t.is(seriesOf(samples, 'gateway_event_loop_delay_max_seconds', { service: 'worker', queue: w.queue }).length, 1, w.queue);
      t.true(seriesOf(samples, 'gateway_event_loop_delay_seconds_count', { queue: w.queue }).length === 1, w.queue);
    }

    // Account K's builds go to the knowledge worker; once one runs there, the worker is held still.
    const k = await gw.newAccount();
    const builds: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await uploadJson(gw, k.id, 'default', { filename: `manual-${i}.md`, content: manual(`Manual ${i}`, 5) });
      t.is(r.status, 202, JSON.stringify(r.body));
      builds.push(r.body.id);
    }
    const knowledge = workers.find((w) => w.queue === 'knowledge')!;
    for (let i = 0; ; i++) {
      if ((await gw.deps.db.KbBuild.countDocuments({ _id: { $in: builds }, state: { $ne: 'queued' } })) > 0) break;
      if (i > 1200) throw new Error('no build started on the knowledge worker');
      await new Promise((r) => setTimeout(r, 100));
    }
    knowledge.child.kill('SIGSTOP');

    // Account M's image task, on the media queue: its worker is free, it completes.
    const m = await gw.newAccount();
    const key = (await gw.newKey(m.id)).key;
    const sub = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'flux-kontext-pro', prompt: 'isolation', async: true }),
    });
    t.is(sub.status, 200);
    const { id } = (await sub.json()) as { id: string };
    let final: Response | undefined;
    for (let i = 0; i < 1200; i++) {
      const r = await fetch(`${gw.url}/v1/images/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
      if (r.status !== 202) {
        final = r;
        break;
      }
      await r.body?.cancel();
      await new Promise((res) => setTimeout(res, 100));
    }
    t.is(final?.status, 200, 'the media task completed');
    t.is((await gw.deps.db.Task.findById(id).lean())?.state, 'succeeded');
    // ... while knowledge work waited on the held worker.
    t.is(knowledge.child.exitCode, null);
    const unfinished = await gw.deps.db.KbBuild.countDocuments({ _id: { $in: builds }, state: { $in: ['queued', 'running'] } });
    t.true(unfinished >= 1, `${unfinished} builds left on the knowledge queue`);

    // Let go: every build finishes (a compile the pause outlived is retried after its heartbeat timeout).
    knowledge.child.kill('SIGCONT');
    for (const b of builds) t.is((await waitBuild(gw, k.id, 'default', b, 300_000)).state, 'succeeded');
  } finally {
    for (const w of workers) {
      w.child.kill('SIGCONT');
      w.child.kill('SIGKILL');
    }
    await gw.close();
  }
});
