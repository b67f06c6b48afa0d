// The operator's Channels page in the console: list with breaker state, disable
// and enable, "test this channel"; refused to a signed-in user who is not the operator.
import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
});
test.after.always(async () => gw?.close());

/** A cookie jar over fetch, enough for the console's forms. */
function browser() {
  const jar = new Map<string, string>();
  const go = async (path: string, init: { method?: string; form?: Record<string, string> } = {}) => {
    const res = await fetch(gw.url + path, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        origin: gw.url,
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return { status: res.status, text: await res.text(), location: res.headers.get('location') };
  };
  return { go };
}

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1];

test('operator: channels listed with health; disable, enable and test from the page', async (t) => {
  const b = browser();
  const signin = await b.go('/console/signin');
  const signed = await b.go('/console/signin', { method: 'POST', form: { _csrf: csrfOf(signin.text), mode: 'operator', token: gw.config.ADMIN_TOKEN, next: '/console/channels' } });
  t.is(signed.status, 302, signed.text.slice(0, 300));
  const list = await b.go('/console/channels');
  t.is(list.status, 200);
  t.true(list.text.includes('<code>openai-a</code>'));
  t.true(list.text.includes('closed'));
  t.true(list.text.includes('href="/console/channels"'), 'in the operator navigation');
  const csrf = csrfOf(list.text);

  const off = await b.go('/console/channels/qwen-b/enabled', { method: 'POST', form: { _csrf: csrf, enabled: 'false' } });
  t.is(off.status, 302);
  t.false((await gw.admin('GET', '/channels/qwen-b')).body.enabled);
  await b.go('/console/channels/qwen-b/enabled', { method: 'POST', form: { _csrf: csrf, enabled: 'true' } });
  t.true((await gw.admin('GET', '/channels/qwen-b')).body.enabled);

  const tested = await b.go('/console/channels/openai-b/test', { method: 'POST', form: { _csrf: csrf } });
  t.is(tested.status, 200);
  t.regex(tested.text, /Test of <code>openai-b<\/code>: OK/);
  t.regex(tested.text, /HTTP 200 in \d+ ms/);
  // Without the CSRF token: refused, nothing changed.
  const forged = await b.go('/console/channels/qwen-b/enabled', { method: 'POST', form: { enabled: 'false' } });
  t.is(forged.status, 403);
  t.true((await gw.admin('GET', '/channels/qwen-b')).body.enabled);
});

test('a signed-in user who is not the operator gets 404', async (t) => {
  const r = await gw.admin('POST', '/users', { email: 'chan-user@example.com', name: 'U', password: 'a long enough password 1' });
  t.is(r.status, 201, JSON.stringify(r.body));
  const b = browser();
  const signin = await b.go('/console/signin');
  const signed = await b.go('/console/signin', { method: 'POST', form: { _csrf: csrfOf(signin.text), email: 'chan-user@example.com', password: 'a long enough password 1', next: '/console/overview' } });
  t.is(signed.status, 302, signed.text.slice(0, 300));
  const page = await b.go('/console/channels');
  t.is(page.status, 404);
  t.false(page.text.includes('openai-a'));
});
