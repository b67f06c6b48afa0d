import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { startGateway, type TestGateway } from '../helpers/stack';
import { bundleWorkflows } from '../../dev/scripts/bundle-workflows';
import { deliveriesUntil, post, startReceiver, verifyRecipe, WEBHOOK_ENV } from './kit';

/**
 * The worker delivering a webhook is SIGKILLed while the receiver holds the
 * request: the delivery is not lost (another worker retries it once the
 * attempt times out), it may arrive more than once, and every copy carries
 * the same event id and body.
 */
let bundle: string;
test.before(async () => {
  bundle = process.env.WORKFLOW_BUNDLE ?? (await bundleWorkflows(`.data/webhook-kill-bundle-${process.pid}.js`));
});

const ENV = { ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: '2000' };

function startWorker(gw: TestGateway, queue: 'media' | 'webhooks'): ChildProcess {
  const c = gw.config;
  const env = {
    WORKFLOW_BUNDLE: bundle,
    ...process.env,
    MONGO_URL: c.MONGO_URL, REDIS_URL: c.REDIS_URL, REDIS_PREFIX: c.REDIS_PREFIX, TEMPORAL_ADDRESS: c.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: c.TEMPORAL_TASK_QUEUE, ADMIN_TOKEN: c.ADMIN_TOKEN, KEY_ENCRYPTION_KEY: c.KEY_ENCRYPTION_KEY,
    SIMULATOR_URL: c.SIMULATOR_URL, MEDIA_POLL_INTERVAL_MS: '100', LOG_LEVEL: 'warn', ...ENV,
  };
  return spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts', `--queue=${queue}`], { env, stdio: ['ignore', 'ignore', 'pipe'] });
}

function exited(p: ChildProcess, timeoutMs: number): Promise<NodeJS.Signals | number | null> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve(p.signalCode ?? p.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('worker did not exit in time')), timeoutMs);
    p.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ?? code);
    });
  });
}

test('a worker SIGKILLed mid-delivery: delivered again by the next worker, same event id and body, never lost', async (t) => {
  t.timeout(180_000);
  const gw = await startGateway(ENV, { simulator: true });
  const workers: ChildProcess[] = [];
  let first: ChildProcess | undefined;
  const rx = await startReceiver((n) => {
    if (n === 1) {
      first?.kill('SIGKILL'); // mid-delivery: the request is here, its answer never leaves
      return 'hang';
    }
    return 200;
  });
  try {
    const a = await gw.newAccount();
    const key = (await gw.newKey(a.id)).key;
    const secret = (await gw.admin('POST', `/accounts/${a.id}/webhook-secret`)).body.secret as string;
    // The task runs on a media worker; its delivery on a webhooks worker, the one killed.
    workers.push(startWorker(gw, 'media'));
    first = startWorker(gw, 'webhooks');
    workers.push(first);
    const sub = await post(gw, key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'kill test', async: true, callback_url: rx.url });
    t.is(sub.status, 200);
    const { id } = (await sub.json()) as { id: string };
    await rx.waitFor(1, 120_000);
    t.is(await exited(first, 30_000), 'SIGKILL');
    workers.push(startWorker(gw, 'webhooks'));

    const hits = await rx.waitFor(2, 120_000);
    t.is(hits[1].headers['webhook-id'], hits[0].headers['webhook-id']);
    t.is(hits[1].body, hits[0].body);
    for (const h of hits) t.true(verifyRecipe(secret, h.headers, h.body));
    const log = await deliveriesUntil(gw, key, id, (l) => l.status === 'delivered', 60_000);
    t.is(log.event.id, hits[0].headers['webhook-id']);
    t.is(log.data[0].outcome, 'interrupted', 'the killed attempt never finished');
    t.like(log.data[log.data.length - 1], { outcome: 'delivered', status_code: 200 });
    const task = await gw.deps.db.Task.findById(id).lean();
    t.is(task?.state, 'succeeded');
  } finally {
    for (const w of workers) w.kill('SIGKILL');
    await rx.close();
    await gw.close();
  }
});
