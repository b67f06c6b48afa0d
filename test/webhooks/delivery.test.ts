import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { startGateway, type TestGateway } from '../helpers/stack';
import { deliveriesUntil, get, post, startReceiver, verifyRecipe, WEBHOOK_ENV } from './kit';

/**
 * A task with a callback_url: when it ends, the receiver gets the body a
 * poll returns, signed as docs/webhooks.md says (checked with the documented
 * recipe and with the Standard Webhooks library); failures are retried with
 * the same event id; every attempt is in the delivery log.
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway(WEBHOOK_ENV, { simulator: true, worker: true });
});
test.after.always(async () => {
  await gw?.close();
});

async function account(withSecret = true) {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const secret = withSecret ? (await gw.admin('POST', `/accounts/${a.id}/webhook-secret`)).body.secret as string : '';
  return { id: a.id, key, secret };
}

test('the signing secret: created once (shown once), metadata after, 409 on a second create, 404 for an unknown account, admin only', async (t) => {
  const a = await gw.newAccount();
  const created = await gw.admin('POST', `/accounts/${a.id}/webhook-secret`);
  t.is(created.status, 201);
  t.regex(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.is(created.body.account_id, a.id);
  const again = await gw.admin('POST', `/accounts/${a.id}/webhook-secret`);
  t.is(again.status, 409);
  const read = await gw.admin('GET', `/accounts/${a.id}/webhook-secret`);
  t.is(read.status, 200);
  t.is(read.body.id, created.body.id);
  t.is(read.body.secret, undefined);
  t.is((await gw.admin('GET', '/accounts/acct_nope/webhook-secret')).status, 404);
  const key = (await gw.newKey(a.id)).key;
  const asKey = await fetch(`${gw.url}/admin/v1/accounts/${a.id}/webhook-secret`, { headers: { authorization: `Bearer ${key}` } });
  t.is(asKey.status, 401);
});

test('an image task delivers the poll body once, signed; the recipe and the Standard Webhooks library both verify it', async (t) => {
  const { key, secret } = await account();
  const rx = await startReceiver();
  try {
    const sub = await post(gw, key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'a fox', async: true, callback_url: rx.url });
    t.is(sub.status, 200);
    const { id } = (await sub.json()) as { id: string };
    const [hit] = await rx.waitFor(1);
    const poll = await get(gw, key, `/v1/images/generations/${id}`);
    t.is(poll.status, 200);
    t.is(hit.body, await poll.text(), 'the body is the poll body, byte for byte');
    t.is(hit.headers['content-type'], 'application/json');
    t.is(hit.headers['webhook-id'], `evt_${id.replace(/^task_/, '')}`);
    t.is(hit.headers['x-gateway-task-id'], id);
    t.is(hit.headers['x-gateway-event-type'], 'task.succeeded');
    t.is(hit.headers['x-gateway-poll-status'], '200');
    t.true(Math.abs(Number(hit.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
    t.true(verifyRecipe(secret, hit.headers, hit.body), 'the documented recipe verifies');
    t.false(verifyRecipe(secret, hit.headers, hit.body.replace('"data"', '"dat4"')), 'a changed body does not');
    t.false(verifyRecipe(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, hit.headers, hit.body), 'another secret does not');
    const lib = new Webhook(secret);
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(hit.headers[h])]));
    t.deepEqual(lib.verify(hit.body, headers), JSON.parse(hit.body));
    t.throws(() => lib.verify(`${hit.body} `, headers));

    const log = await deliveriesUntil(gw, key, id, (l) => l.status === 'delivered');
    t.is(log.callback_url, rx.url);
    t.is(log.event.id, hit.headers['webhook-id']);
    t.is(log.data.length, 1);
    t.like(log.data[0], { attempt: 1, outcome: 'delivered', status_code: 200, error: null });
    // Delivered once: nothing more arrives.
    await new Promise((r) => setTimeout(r, 1000));
    t.is(rx.received.length, 1);
  } finally {
    await rx.close();
  }
});

test('a video task delivers the video poll body; a task without a callback has an empty log; another account gets 404', async (t) => {
  const { key, secret } = await account();
  const rx = await startReceiver();
  try {
    const sub = await post(gw, key, '/v1/videos/generations', {
      model: 'seedance-1-0-pro', content: [{ type: 'text', text: 'waves' }], duration: 5, callback_url: rx.url,
    });
    t.is(sub.status, 200);
    const { id } = (await sub.json()) as { id: string };
    const [hit] = await rx.waitFor(1);
    t.true(verifyRecipe(secret, hit.headers, hit.body));
    const poll = await (await get(gw, key, `/v1/videos/generations/${id}`)).text();
    t.is(hit.body, poll);
    t.is(JSON.parse(hit.body).status, 'succeeded');

    const plain = await post(gw, key, '/v1/videos/generations', { model: 'seedance-1-0-pro', content: [{ type: 'text', text: 'waves' }], duration: 5 });
    const plainId = ((await plain.json()) as { id: string }).id;
    const log = await (await get(gw, key, `/v1/tasks/${plainId}/deliveries`)).json();
    t.like(log, { object: 'list', task_id: plainId, callback_url: null, status: 'none', event: null, data: [] });

    const other = await account(false);
    t.is((await get(gw, other.key, `/v1/tasks/${id}/deliveries`)).status, 404);
    t.is((await get(gw, key, '/v1/tasks/task_nothing/deliveries')).status, 404);
  } finally {
    await rx.close();
  }
});

test('the receiver fails twice (500, 500): retried with backoff, same event id, fresh signatures; the log shows all three attempts', async (t) => {
  const { key, secret } = await account();
  const rx = await startReceiver((n) => (n <= 2 ? 500 : 204));
  try {
    const sub = await post(gw, key, '/v1/music/generations', { model: 'suno-v4-5', prompt: 'harbour lights', title: 'Harbour', callback_url: rx.url });
    t.is(sub.status, 200);
    const { id } = (await sub.json()) as { id: string };
    const hits = await rx.waitFor(3);
    t.is(new Set(hits.map((h) => h.headers['webhook-id'])).size, 1, 'one event id on every attempt');
    t.is(new Set(hits.map((h) => h.body)).size, 1, 'one body on every attempt');
    for (const h of hits) t.true(verifyRecipe(secret, h.headers, h.body));
    t.deepEqual(hits.map((h) => h.headers['x-gateway-delivery-attempt']), ['1', '2', '3']);
    // Exponential backoff: the second gap is longer than the first (300 ms, then 600 ms at least).
    t.true(hits[1].at - hits[0].at >= 250);
    t.true(hits[2].at - hits[1].at >= 550);
    t.is(hits[0].body, await (await get(gw, key, `/v1/music/generations/${id}`)).text());

    const log = await deliveriesUntil(gw, key, id, (l) => l.status === 'delivered');
    t.deepEqual(log.data.map((a: any) => [a.attempt, a.outcome, a.status_code]), [[1, 'http_error', 500], [2, 'http_error', 500], [3, 'delivered', 204]]);
    t.regex(log.data[0].error, /HTTP 500/);
    t.is(log.event.attempts, 3);
  } finally {
    await rx.close();
  }
});

test('rotation: for 24 h a delivery carries two signatures, one per secret; both verify', async (t) => {
  const a = await account();
  const rotated = await gw.admin('POST', `/accounts/${a.id}/webhook-secret/rotate`);
  t.is(rotated.status, 200);
  t.not(rotated.body.secret, a.secret);
  t.truthy(rotated.body.previous?.expires_at);
  const rx = await startReceiver();
  try {
    const sub = await post(gw, a.key, '/v1/audio/speech', { model: 'speech-2-5-hd', text: 'Hello there', voice_id: 'male-qn-qingse', async: true, callback_url: rx.url });
    t.is(sub.status, 200);
    const [hit] = await rx.waitFor(1);
    t.is(String(hit.headers['webhook-signature']).split(' ').length, 2);
    t.true(verifyRecipe(rotated.body.secret, hit.headers, hit.body));
    t.true(verifyRecipe(a.secret, hit.headers, hit.body));
  } finally {
    await rx.close();
  }
});

test('an account without a secret gets one made at its first callback; an operator can read it exactly once, and it signs', async (t) => {
  const { id: acct, key } = await account(false);
  const rx = await startReceiver();
  try {
    const sub = await post(gw, key, '/v1/videos/avatars', { name: 'Anna', source_url: 'https://cdn.example.com/anna.jpg', callback_url: rx.url });
    t.is(sub.status, 200);
    const [hit] = await rx.waitFor(1);
    const first = await gw.admin('GET', `/accounts/${acct}/webhook-secret`);
    t.regex(first.body.secret, /^whsec_/);
    const second = await gw.admin('GET', `/accounts/${acct}/webhook-secret`);
    t.is(second.body.secret, undefined);
    t.true(verifyRecipe(first.body.secret, hit.headers, hit.body));
    t.is(JSON.parse(hit.body).status, 'ready');
  } finally {
    await rx.close();
  }
});

test('replay: the same event id and body again, freshly signed; 409 while a delivery is under way; 400 without a callback; 404 for another account', async (t) => {
  const { key, secret } = await account();
  const rx = await startReceiver();
  try {
    const sub = await post(gw, key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'again', async: true, callback_url: rx.url });
    const { id } = (await sub.json()) as { id: string };
    const [first] = await rx.waitFor(1);
    await deliveriesUntil(gw, key, id, (l) => l.status === 'delivered');
    const replay = await post(gw, key, `/v1/tasks/${id}/deliveries/replay`, {});
    t.is(replay.status, 202);
    t.like(await replay.json(), { object: 'webhook_replay', task_id: id, event_id: first.headers['webhook-id'], round: 1, status: 'pending' });
    const [, second] = await rx.waitFor(2);
    t.is(second.headers['webhook-id'], first.headers['webhook-id']);
    t.is(second.body, first.body);
    t.is(second.headers['x-gateway-delivery-replay'], '1');
    t.true(verifyRecipe(secret, second.headers, second.body));
    const log = await deliveriesUntil(gw, key, id, (l) => l.status === 'delivered' && l.data.length === 2);
    t.deepEqual(log.data.map((a: any) => [a.round, a.attempt, a.outcome]), [[0, 1, 'delivered'], [1, 1, 'delivered']]);

    const plain = await post(gw, key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'no hook', async: true });
    const plainId = ((await plain.json()) as { id: string }).id;
    t.is((await post(gw, key, `/v1/tasks/${plainId}/deliveries/replay`, {})).status, 400);
    const other = await account(false);
    t.is((await post(gw, other.key, `/v1/tasks/${id}/deliveries/replay`, {})).status, 404);
  } finally {
    await rx.close();
  }
});

test('replay is refused (409) while the first delivery is still retrying', async (t) => {
  const { key } = await account();
  const rx = await startReceiver(() => 503);
  try {
    const sub = await post(gw, key, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'busy', async: true, callback_url: rx.url });
    const { id } = (await sub.json()) as { id: string };
    await rx.waitFor(1);
    await deliveriesUntil(gw, key, id, (l) => l.status === 'pending' && l.event !== null);
    const r = await post(gw, key, `/v1/tasks/${id}/deliveries/replay`, {});
    t.is(r.status, 409);
  } finally {
    await rx.close();
  }
});
