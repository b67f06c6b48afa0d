// A deleted channel's breaker leaves every process, not only the one that
// deleted it: another gateway or a worker must not keep reporting it
// (`gateway_channel_breaker_state`), nor carry an open breaker over to a new
// channel created under the same id.
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { buildDeps } from '../../capabilities/bootstrap';
import { createLogger } from '../../platform/logger';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({ CHANNEL_BREAKER_FAILURES: '3', CHANNEL_BREAKER_COOLDOWN_MS: '600000' }, { simulator: true });
});
test.after.always(async () => gw?.close());

const newChannel = (id: string) => ({
  id, vendor: 'openai', adapter: 'chat-completions', base_url: `${gw.simUrl}/ch/${id}`, credentials: { env: 'UPSTREAM_API_KEY' }, models: ['gpt-4.1'], priority: 9,
});

async function eventually(check: () => boolean | Promise<boolean>, ms = 8000): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('another process drops the breaker of a channel deleted elsewhere, and a re-created id starts closed there', async (t) => {
  // Process B: a second gateway or a worker, with its own catalogue cache and breakers.
  const b = await buildDeps(gw.config, createLogger('silent'));
  try {
    t.is((await gw.admin('POST', '/channels', newChannel('gone-a'))).status, 201);
    t.is((await gw.admin('POST', '/channels', newChannel('again-a'))).status, 201);
    t.true(await eventually(() => !!b.catalogue().channels(b.catalogue().resolve('gpt-4.1')!, 'chat-completions').find((c) => c.id === 'again-a')));
    // Both fail on B until their breakers open there.
    for (let i = 0; i < 3; i++) for (const id of ['gone-a', 'again-a']) b.channelHealth.record(id, 'failed', 'upstream HTTP 500');
    t.is(b.channelHealth.state('gone-a').state, 'open');
    t.is(b.channelHealth.state('again-a').state, 'open');

    // Deleted through A: B forgets it once its catalogue hears of the change.
    t.is((await gw.admin('DELETE', '/channels/gone-a')).status, 200);
    t.true(await eventually(() => !b.channelHealth.states().some((s) => s.channel === 'gone-a')), 'B still reports a deleted channel');

    // Deleted and created again under the same id: the new channel is not the old one's open breaker.
    t.is((await gw.admin('DELETE', '/channels/again-a')).status, 200);
    t.is((await gw.admin('POST', '/channels', newChannel('again-a'))).status, 201);
    t.true(await eventually(() => b.channelHealth.state('again-a').state === 'closed'), 'B kept the old open breaker for the new channel');
    t.true(b.channelHealth.admit('again-a'));
  } finally {
    await gw.admin('DELETE', '/channels/gone-a');
    await gw.admin('DELETE', '/channels/again-a');
    await b.close();
  }
});
