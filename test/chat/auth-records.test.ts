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

/**
 * A guess follows the money this process takes out of its wallet (capabilities/accounts/auth-lookup.ts
 * `debited`): every key of the wallet sees a debit by the next guess, the paying key's spend too, and a
 * debit sent while a read is under way is counted on top of that read (a guess may err low, never high).
 */
test('a debit lowers every guess of its wallet and the paying key\'s spend, whatever the number of keys', async (t) => {
  const a = await gw.newAccount();
  const keys = await Promise.all(Array.from({ length: 5 }, () => gw.newKey(a.id)));
  const lookup = new AuthLookup(gw.deps.redis, gw.deps.keys, gw.deps.accounts, gw.deps.wallet);
  const hashes = keys.map((k) => sha256Hex(k.key));
  for (const h of hashes) await lookup.byHash(h);
  const start = lookup.guess(hashes[0])!.balanceNano;
  t.true(start > 2_000_000);

  await gw.deps.wallet.apply({ opId: `test:${a.id}:d1`, accountId: a.id, keyId: keys[1].id, kind: 'charge', amountNano: -1_000_000, keySpendNano: 1_000_000 });
  for (const [i, h] of hashes.entries()) {
    const g = lookup.guess(h)!;
    t.is(g.balanceNano, start - 1_000_000, `key ${i} sees the wallet's debit`);
    t.is(g.keySpendNano, i === 1 ? 1_000_000 : 0, `key ${i}'s spend`);
  }
  t.is(lookup.guess(hashes[1])!.balanceNano, start - 1_000_000, 'read twice, counted once');

  // A fresh read after the debit carries it; the guess then does not count it again.
  const fresh = (await lookup.byHash(hashes[2]))!;
  t.is(fresh.balanceNano, start - 1_000_000);
  t.is(lookup.guess(hashes[2])!.balanceNano, start - 1_000_000);

  // A debit sent while a read is under way: the read may or may not have seen it, the guess counts it.
  const reading = lookup.byHash(hashes[3]);
  const debit = gw.deps.wallet.apply({ opId: `test:${a.id}:d2`, accountId: a.id, kind: 'adjust', amountNano: -500_000 });
  await Promise.all([reading, debit]);
  t.true(lookup.guess(hashes[3])!.balanceNano <= start - 1_500_000);
  t.is((await gw.deps.wallet.balance(a.id)), start - 1_500_000, 'the wallet itself moved once per op');

  // Money coming back (a credit) is not a debit: guesses stay low until their fresh read.
  await gw.deps.wallet.apply({ opId: `test:${a.id}:c1`, accountId: a.id, kind: 'adjust', amountNano: 700_000 });
  t.is(lookup.guess(hashes[4])!.balanceNano, start - 1_500_000);
});
