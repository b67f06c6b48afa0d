import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { post } from './helpers';
import { formatCredits, parseCredits } from '../../domain/money';
import { capHolds } from '../../gateway/chat/cap-holds';

/**
 * A key's spend cap bounds what its calls in parallel cost (gateway/chat/cap-holds.ts): each admitted
 * call holds its pre-charge estimate until its charge is written. A wallet keeps the spec's rule
 * (settlement does not check it, so calls in parallel may take it below zero).
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

const BODY = { model: 'gpt-5-mini', messages: [{ role: 'user', content: `Summarise ${'lorem ipsum dolor sit amet '.repeat(300)}` }], max_tokens: 100 };
const cost = (r: { headers: Headers }) => parseCredits(r.headers.get('x-gateway-cost') ?? '0');

async function balanceOf(key: string) {
  const res = await fetch(`${gw.url}/v1/key/balance`, { headers: { authorization: `Bearer ${key}` } });
  return (await res.json()) as { used_usd: string; remaining_usd: string };
}

test.serial('20 calls in parallel on a capped key: what they cost stays within the cap, the rest are 402', async (t) => {
  const a = await gw.newAccount();
  const probe = await gw.newKey(a.id);
  const one = await post(gw, '/v1/chat/completions', BODY, { key: probe.key });
  t.is(one.status, 200);
  const each = cost(one);
  t.true(each > 0);
  const cap = Math.floor(each * 3.5);
  const k = await gw.newKey(a.id, { spend_cap_usd: formatCredits(cap) });

  const rs = await Promise.all(Array.from({ length: 20 }, () => post(gw, '/v1/chat/completions', BODY, { key: k.key })));
  const ok = rs.filter((r) => r.status === 200);
  t.true(ok.length >= 1 && ok.length <= 3, `${ok.length} admitted`);
  t.true(rs.every((r) => r.status === 200 || r.status === 402));
  const spent = ok.reduce((s, r) => s + cost(r), 0);
  t.true(spent <= cap, `spent ${spent} of a ${cap} cap`);
  t.is(parseCredits((await balanceOf(k.key)).used_usd), spent);
  t.is(capHolds.of(k.id), 0, 'every hold given back');

  // One after another, the key still spends up to its cap as before.
  const more = await post(gw, '/v1/chat/completions', BODY, { key: k.key });
  t.is(more.status, spent + each <= cap ? 200 : 402);
});

test.serial('a key without a cap on a small wallet: calls in parallel are not held (the spec lets the wallet go below zero)', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const one = await post(gw, '/v1/chat/completions', BODY, { key: k.key });
  const each = cost(one);
  // Leave the wallet about two calls' worth: every call alone fits.
  const balance = parseCredits((await balanceOf(k.key)).remaining_usd);
  await gw.deps.wallet.apply({ opId: `${a.id}:shrink`, accountId: a.id, kind: 'adjust', amountNano: -(balance - 2 * each) });
  const rs = await Promise.all(Array.from({ length: 8 }, () => post(gw, '/v1/chat/completions', BODY, { key: k.key })));
  t.true(rs.filter((r) => r.status === 200).length > 2, rs.map((r) => r.status).join(','));
  t.is(capHolds.size, 0);
});
