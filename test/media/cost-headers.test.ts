import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

/** Issue 26: a media submission answers what it holds; a finished task's poll answers what it was charged. */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true, worker: true });
});
test.after.always(async () => gw?.close());

test('async image: x-gateway-cost-held on submit, x-gateway-cost = the ledger charge on the final poll', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const before = await gw.deps.wallet.balance(a.id);
  const r = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a held fox', n: 2, async: true }),
  });
  t.is(r.status, 200);
  t.is(r.headers.get('x-gateway-cost-held'), '0.08');
  const { id } = (await r.json()) as { id: string };
  let final: Response | undefined;
  for (let i = 0; i < 300 && !final; i++) {
    const p = await fetch(`${gw.url}/v1/images/generations/${id}`, { headers: { authorization: `Bearer ${key}` } });
    if (p.status !== 202) final = p;
    else {
      t.is(p.headers.get('x-gateway-cost-held'), '0.08');
      await p.body?.cancel();
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  t.is(final?.status, 200);
  const cost = final!.headers.get('x-gateway-cost')!;
  t.is(parseCredits(cost), parseCredits('0.08'));
  t.is(before - (await gw.deps.wallet.balance(a.id)), parseCredits(cost), 'the wallet moved by exactly the reported charge');
});

test('avatar creation (a task priced per creation): its poll answers the hold while pending, x-gateway-cost = the ledger charge once ready', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const before = await gw.deps.wallet.balance(a.id);
  const r = await fetch(`${gw.url}/v1/videos/avatars`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'cost probe', source_url: 'https://cdn.example.com/anna.jpg' }),
  });
  t.is(r.status, 200);
  const held = r.headers.get('x-gateway-cost-held');
  t.truthy(held);
  const { id } = (await r.json()) as { id: string };
  let final: Response | undefined;
  for (let i = 0; i < 300 && !final; i++) {
    const p = await fetch(`${gw.url}/v1/videos/avatars/${id}`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await p.json()) as { status: string };
    if (body.status !== 'pending') final = p;
    else {
      t.is(p.headers.get('x-gateway-cost-held'), held);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  t.truthy(final);
  const cost = final!.headers.get('x-gateway-cost');
  t.truthy(cost, 'the finished avatar poll says what it was charged');
  t.is(before - (await gw.deps.wallet.balance(a.id)), parseCredits(cost!), 'the wallet moved by exactly the reported charge');
});

test('synchronous media answers (an image, speech) say what the task was charged: x-gateway-cost = the ledger movement', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const calls: Array<[string, unknown]> = [
    ['/v1/images/generations', { model: 'gpt-image-1', prompt: 'a sync fox' }],
    ['/v1/audio/speech', { model: 'speech-2-5-hd', text: 'Cost probe, spoken once.', voice_id: 'male-qn-qingse' }],
  ];
  for (const [path, body] of calls) {
    const before = await gw.deps.wallet.balance(a.id);
    const r = await fetch(`${gw.url}${path}`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    t.is(r.status, 200, path);
    await r.arrayBuffer();
    const cost = r.headers.get('x-gateway-cost');
    t.truthy(cost, `${path}: the answer says what it was charged`);
    t.is(before - (await gw.deps.wallet.balance(a.id)), parseCredits(cost ?? '-1'), `${path}: the wallet moved by exactly the reported charge`);
  }
});
