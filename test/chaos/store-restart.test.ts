import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { startBlipProxy, type BlipProxy } from '../helpers/blip-proxy';

/**
 * A store that restarts under a request (the chaos run SIGKILLs and restarts
 * it every two minutes) closes every connection the gateway had: operations
 * in flight on them fail with "connection closed" although the store answers
 * again a moment later. The driver retries none of them on a standalone
 * store. A media submission with an Idempotency-Key caught that way must
 * still be accepted once (one task, one hold, replays answer it), whether
 * its claim never reached the store or reached it and lost its answer; and a
 * store that stays down is answered with the spec's `internal_error` (500,
 * Retry-After: 1) in the endpoint's shape, leaving the key free for a retry.
 */
let gw: TestGateway;
let proxy: BlipProxy;
test.before(async () => {
  const base = new URL(process.env.MONGO_URL!);
  proxy = await startBlipProxy({ host: base.hostname, port: Number(base.port) });
  gw = await startGateway({ MONGO_URL: proxy.url('mongodb', `/t_restart_${Date.now().toString(36)}`) }, { simulator: true });
});
test.after.always(async () => {
  proxy?.up();
  await gw?.close();
  await proxy?.close();
});

const body = (prompt: string) => ({ model: 'seedance-1-0-pro', content: [{ type: 'text', text: prompt }], duration: 5 });
const submit = (key: string, idem: string, prompt: string) =>
  fetch(`${gw.url}/v1/videos/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'Idempotency-Key': idem },
    body: JSON.stringify(body(prompt)),
  }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() }));

async function account() {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  // Auth records and the catalogue are cached from here on: the next store call of a submission is its claim.
  const warm = await submit(key, `warm-${a.id}`, 'warm');
  if (warm.status !== 200) throw new Error(`warm-up submission: ${warm.status} ${warm.text}`);
  return { id: a.id, key };
}

async function books(accountId: string) {
  await gw.deps.wallet.journal.flush(); // holds are written ahead, drained in batches
  return {
    tasks: await gw.deps.db.Task.countDocuments({ account_id: accountId }),
    holds: await gw.deps.db.Ledger.countDocuments({ account_id: accountId, kind: 'reserve' }),
  };
}

for (const lost of ['requests', 'answers'] as const) {
  test.serial(`a submission whose store connection closes in a restart (${lost} lost) is accepted once`, async (t) => {
    t.timeout(90_000);
    const a = await account();
    proxy.drop(lost);
    const pending = submit(a.key, 'restart-key', `restart ${lost}`);
    await new Promise((r) => setTimeout(r, 400));
    proxy.restart();
    const res = await pending;
    t.is(res.status, 200, res.text);
    const id = JSON.parse(res.text).id as string;
    t.truthy(id);
    const again = await submit(a.key, 'restart-key', `restart ${lost}`);
    t.is(again.status, 200, again.text);
    t.is(again.headers.get('idempotency-replayed'), 'true');
    t.is(JSON.parse(again.text).id, id);
    // The warm-up's task and this one: one task and one hold each.
    t.deepEqual(await books(a.id), { tasks: 2, holds: 2 });
  });
}

test.serial('a store that stays down: 500 internal_error with Retry-After: 1, and the key is free once it is back', async (t) => {
  t.timeout(120_000);
  const a = await account();
  proxy.down();
  let res;
  try {
    res = await submit(a.key, 'down-key', 'down');
  } finally {
    proxy.up();
  }
  t.is(res.status, 500, res.text);
  t.is(res.headers.get('retry-after'), '1');
  t.is(JSON.parse(res.text).error.code, 'internal_error');
  const after = await submit(a.key, 'down-key', 'down');
  t.is(after.status, 200, after.text);
  t.is(after.headers.get('idempotency-replayed'), null);
  t.deepEqual(await books(a.id), { tasks: 2, holds: 2 });
});
