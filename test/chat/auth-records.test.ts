import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';
import { AuthLookup } from '../../capabilities/accounts/auth-lookup';
import { sha256Hex } from '../../platform/secrets';

/**
 * The auth lookup parses a key's records only when their text in Redis changed
 * (capabilities/accounts/auth-lookup.ts `records`): calls of an unchanged key
 * share one frozen copy, and any edit is seen by the very next lookup.
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

test('an unchanged key shares its frozen records between lookups; an edit is read at once, and the old copy stays as it was', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id, { allowed_models: ['gpt-5.1'] });
  const lookup = new AuthLookup(gw.deps.redis, gw.deps.keys, gw.deps.accounts, gw.deps.wallet);
  const hash = sha256Hex(k.key);
  const first = (await lookup.byHash(hash))!;
  const second = (await lookup.byHash(hash))!;
  t.not(first, second, 'each lookup is its own snapshot (balances move)');
  t.is(second.key, first.key);
  t.is(second.account, first.account);
  t.true(Object.isFrozen(first.key) && Object.isFrozen(first.key.allowed_models) && Object.isFrozen(first.account));
  t.throws(() => {
    (first.key as { enabled: boolean }).enabled = false;
  }, { instanceOf: TypeError });

  t.is((await gw.admin('PATCH', `/keys/${k.id}`, { allowed_models: ['gpt-5.1', 'claude-sonnet-4-5'] })).status, 200);
  const edited = (await lookup.byHash(hash))!;
  t.not(edited.key, first.key);
  t.deepEqual(edited.key.allowed_models, ['gpt-5.1', 'claude-sonnet-4-5']);
  t.deepEqual(first.key.allowed_models, ['gpt-5.1'], 'a call holding the old snapshot keeps what it was admitted on');
  t.is(edited.account, first.account, 'the account record did not change: still shared');

  t.is((await gw.admin('PATCH', `/keys/${k.id}`, { enabled: false })).status, 200);
  t.false((await lookup.byHash(hash))!.key.enabled);
});
