import test from 'ava';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import { startGateway, type TestGateway } from '../helpers/stack';
import { AuthLookup } from '../../capabilities/accounts/auth-lookup';
import { sha256Hex } from '../../platform/secrets';

/**
 * A key disable takes effect on the next request, whatever else happens to
 * the key at the same time (the chaos run found calls served on keys whose
 * disable had been acknowledged): two admins changing one key at once (a
 * disable and a new spend cap) both apply and neither undoes the other, and
 * a key record rebuilt from Mongo on a miss never overwrites a newer change.
 */
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => gw?.close());

const models = (key: string) => fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => {
  await r.body?.cancel();
  return r.status;
});

test.serial('a disable and a spend-cap change sent together both apply: the key is refused at once', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id, { spend_cap_usd: '5' });
  for (let round = 0; round < 12; round++) {
    t.is((await gw.admin('PATCH', `/keys/${k.id}`, { enabled: true })).status, 200);
    t.is(await models(k.key), 200);
    const cap = `${round + 1}`;
    const [off, capped] = await Promise.all([
      gw.admin('PATCH', `/keys/${k.id}`, { enabled: false }),
      gw.admin('PATCH', `/keys/${k.id}`, { spend_cap_usd: cap }),
    ]);
    t.is(off.status, 200);
    t.is(capped.status, 200);
    const now = (await gw.admin('GET', `/keys/${k.id}`)).body;
    t.false(now.enabled, `round ${round}: the disable was undone by the concurrent cap change`);
    t.is(Number(now.spend_cap_usd), Number(cap), `round ${round}: the cap change was lost`);
    t.is(await models(k.key), 401, `round ${round}: a request after both answers is refused`);
  }
});

test.serial('a key record rebuilt from Mongo does not overwrite a change made meanwhile', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  const owner = { keyId: k.id, accountId: a.id, walletId: a.id };
  // Redis lost the record (a restart without its data): a request rebuilds it from a Mongo read that
  // predates a disable landing in between.
  await gw.deps.redis.del(accountRedisKeys.keyRecord(a.id, k.id));
  const stale = await gw.deps.db.ApiKey.findById(k.id).lean();
  t.is((await gw.admin('PATCH', `/keys/${k.id}`, { enabled: false })).status, 200);
  const realFind = gw.deps.db.ApiKey.findById.bind(gw.deps.db.ApiKey);
  (gw.deps.db.ApiKey as any).findById = () => ({ lean: async () => stale });
  try {
    await gw.deps.keys.record(owner);
  } finally {
    (gw.deps.db.ApiKey as any).findById = realFind;
  }
  const lookup = new AuthLookup(gw.deps.redis, gw.deps.keys, gw.deps.accounts, gw.deps.wallet);
  t.false((await lookup.byHash(sha256Hex(k.key)))!.key.enabled, 'the disable stands');
  t.is(await models(k.key), 401);
});
