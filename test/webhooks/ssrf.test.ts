import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { checkCallbackUrl } from '../../capabilities/webhooks/callback-url';
import { deliveriesUntil, get, post, WEBHOOK_ENV } from './kit';
import { startDns } from './dns';

/**
 * Callback URLs that would make the gateway reach inside its own network
 * are refused: at submission (400 naming callback_url, in the endpoint's
 * error shape, nothing charged) and again at delivery, on the addresses the
 * host resolves to then (a name that turned private is refused, not retried).
 */
let gw: TestGateway;
let dns: Awaited<ReturnType<typeof startDns>>;
test.before(async () => {
  dns = await startDns({ 'hooks.rebound.test': '10.0.0.7', 'hooks.metadata.test': '169.254.169.254' });
  gw = await startGateway({ ...WEBHOOK_ENV, WEBHOOK_DNS_SERVERS: dns.server }, { simulator: true, worker: true });
});
test.after.always(async () => {
  await gw?.close();
  await dns?.close();
});

test('the policy, by mode', (t) => {
  const refusedEverywhere = [
    'https://10.0.0.1/h', 'https://192.168.1.1/h', 'https://172.16.0.1/h', 'https://169.254.169.254/latest/meta-data',
    'https://[fe80::1]/h', 'https://[fd00::1]/h', 'https://100.64.0.1/h', 'https://0.0.0.0/h', 'https://[::]/h',
    'https://[::ffff:10.0.0.1]/h', 'https://metadata.internal/h', 'https://printer.local/h', 'https://intranet/h',
    'ftp://example.com/h', 'file:///etc/passwd', 'https://user:pw@example.com/h', 'not a url', 'http://example.com/h',
  ];
  for (const url of refusedEverywhere) {
    t.false(checkCallbackUrl(url, 'test').ok, `test mode refuses ${url}`);
    t.false(checkCallbackUrl(url, 'production').ok, `production refuses ${url}`);
  }
  const loopback = ['http://127.0.0.1:9/h', 'https://127.0.0.1/h', 'http://localhost:8080/h', 'http://[::1]:9/h', 'http://2130706433/h', 'http://0x7f.1/h', 'http://[::ffff:127.0.0.1]/h'];
  for (const url of loopback) {
    t.true(checkCallbackUrl(url, 'test').ok, `test mode takes ${url}`);
    t.true(checkCallbackUrl(url, 'development').ok, `development takes ${url}`);
    t.false(checkCallbackUrl(url, 'production').ok, `production refuses ${url}`);
  }
  t.true(checkCallbackUrl('https://hooks.example.com/task?x=1', 'production').ok);
  // Another scheme is refused with what the mode does take.
  t.like(checkCallbackUrl('ftp://127.0.0.1/', 'development'), { ok: false, reason: 'must use https (or http to a loopback receiver, outside production)' });
  t.like(checkCallbackUrl('ftp://127.0.0.1/', 'production'), { ok: false, reason: 'must use https' });
  t.false(checkCallbackUrl(`https://example.com/${'a'.repeat(2100)}`, 'production').ok);
});

const FAMILIES: Array<{ path: string; body: Record<string, unknown> }> = [
  { path: '/v1/images/generations', body: { model: 'gpt-image-1', prompt: 'a fox', async: true } },
  { path: '/v1/videos/generations', body: { model: 'seedance-1-0-pro', content: [{ type: 'text', text: 'waves' }], duration: 5 } },
  { path: '/v1/videos/generations', body: { model: 'dh-lipsync', source_video_url: 'https://cdn.example.com/v.mp4', audio_url: 'https://cdn.example.com/a.mp3', duration: 5 } },
  { path: '/v1/music/generations', body: { model: 'suno-v4-5', prompt: 'harbour' } },
  { path: '/v1/audio/speech', body: { model: 'speech-2-5-hd', text: 'Hello', voice_id: 'male-qn-qingse', async: true } },
  { path: '/v1/videos/avatars', body: { name: 'Anna', source_url: 'https://cdn.example.com/anna.jpg' } },
];

test('submission: private, link-local and plain-http callbacks are 400 on every async family, nothing charged, no task', async (t) => {
  const a = await gw.newAccount();
  const key = (await gw.newKey(a.id)).key;
  const before = await gw.deps.wallet.balance(a.id);
  for (const f of FAMILIES) {
    for (const cb of ['https://10.1.2.3/hook', 'https://169.254.169.254/latest/meta-data', 'http://hooks.example.com/h', 'gopher://x.example.com/']) {
      const r = await post(gw, key, f.path, { ...f.body, callback_url: cb });
      const text = await r.text();
      t.is(r.status, 400, `${f.path} ${cb}: ${text}`);
      t.regex(text, /callback_url/);
      t.truthy(JSON.parse(text).error, `${f.path}: an error object`);
    }
  }
  t.is(await gw.deps.wallet.balance(a.id), before);
  t.is(await gw.deps.db.Task.countDocuments({ account_id: a.id }), 0);
  // The images error is the OpenAI shape, with the field named.
  const r = await post(gw, key, '/v1/images/generations', { ...FAMILIES[0].body, callback_url: 'https://192.168.0.10/h' });
  t.like(await r.json(), { error: { param: 'callback_url', code: 'invalid_request' } });
});

test('production mode: loopback callbacks (any notation) are 400; a public https one is taken', async (t) => {
  const prod = await startGateway({ DEPLOYMENT_MODE: 'production' });
  try {
    const a = await prod.newAccount();
    const key = (await prod.newKey(a.id)).key;
    for (const cb of ['http://127.0.0.1:8080/h', 'https://localhost/h', 'https://[::1]/h', 'https://2130706433/h', 'https://0x7f.1/h', 'https://api.localhost/h']) {
      const r = await post(prod, key, '/v1/images/generations', { ...FAMILIES[0].body, callback_url: cb });
      t.is(r.status, 400, cb);
      t.like(await r.json(), { error: { param: 'callback_url' } });
    }
    const ok = await post(prod, key, '/v1/images/generations', { ...FAMILIES[0].body, callback_url: 'https://hooks.example.com/task' });
    t.is(ok.status, 200);
    const { id } = (await ok.json()) as { id: string };
    t.is((await prod.deps.db.Task.findById(id).lean())?.callback_url, 'https://hooks.example.com/task');
  } finally {
    await prod.close();
  }
});

for (const [host, range] of [['hooks.rebound.test', 'private'], ['hooks.metadata.test', 'linkLocal']] as const) {
  test(`delivery: a name that resolves to a ${range} address is refused once, not retried, and logged`, async (t) => {
    const a = await gw.newAccount();
    const key = (await gw.newKey(a.id)).key;
    const sub = await post(gw, key, '/v1/images/generations', { ...FAMILIES[0].body, callback_url: `https://${host}/hook` });
    t.is(sub.status, 200, 'the name is public-looking at submission');
    const { id } = (await sub.json()) as { id: string };
    const log = await deliveriesUntil(gw, key, id, (l) => l.status === 'refused' || l.status === 'delivered' || l.status === 'failed');
    t.is(log.status, 'refused');
    t.is(log.data.length, 1);
    t.like(log.data[0], { outcome: 'refused', status_code: null });
    t.regex(log.data[0].error, new RegExp(`${range}`));
    await new Promise((r) => setTimeout(r, 1500));
    const later = (await (await get(gw, key, `/v1/tasks/${id}/deliveries`)).json()) as { data: unknown[] };
    t.is(later.data.length, 1, 'no retry');
  });
}
