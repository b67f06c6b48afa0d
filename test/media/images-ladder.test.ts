import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';

let gw: TestGateway;
test.before(async () => {
  // A 1.5 s budget stands in for the 280 s of a sync image call over the channel ladder.
  gw = await startGateway({ MEDIA_MAX_RUN_MS: '1500' }, { simulator: true, worker: true });
});
test.after.always(async () => gw?.close());

test.serial('a sync image call stops the channel ladder when its total budget is spent: 504, refunded, no later channel tried', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  await gw.control('POST', '/media/faults', { channel: 'openai-images-a', fault: { type: 'delay', ms: 4000 }, times: 1 });
  const r = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'slow' }),
  });
  t.is(r.status, 504);
  t.is(((await r.json()) as { error: { code: string } }).error.code, 'upstream_timeout');
  t.is(await gw.deps.wallet.balance(a.id), parseCredits('40.44'));
  const b = (await gw.control('GET', '/media/tasks?channel=openai-images-b')) as { tasks: unknown[] };
  t.is(b.tasks.length, 0);
});
