import test from 'ava';
import { accountRedisKeys } from '../../capabilities/accounts/store';
import { startGateway, type TestGateway } from '../helpers/stack';
import { AuthLookup } from '../../capabilities/accounts/auth-lookup';
import { sha256Hex } from '../../platform/secrets';

/**
 * An account deactivation takes effect on the next request, whatever else
 * happens to the account at the same time (the race the chaos run found on
 * keys, checked on accounts): two admins changing one account at once (a
 * deactivation and a new rate limit) both apply and neither undoes the
 * other, and an account record rebuilt from Mongo on a miss never
 * overwrites a newer change.
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

test.serial('a deactivation and a rate-limit change sent together both apply: the account is refused at once', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  for (let round = 0; round < 12; round++) {
    t.is((await gw.admin('PATCH', `/accounts/${a.id}`, { status: 'active' })).status, 200);
    t.is(await models(k.key), 200);
    const rpm = 1000 + round;
    const [off, limited] = await Promise.all([
      gw.admin('PATCH', `/accounts/${a.id}`, { status: 'inactive' }),
      gw.admin('PATCH', `/accounts/${a.id}`, { rate_limit: { rpm } }),
    ]);
    t.is(off.status, 200);
    t.is(limited.status, 200);
    const now = (await gw.admin('GET', `/accounts/${a.id}`)).body;
    t.is(now.status, 'inactive', `round ${round}: the deactivation was undone by the concurrent limit change`);
    t.is(now.rate_limit.rpm, rpm, `round ${round}: the limit change was lost`);
    const record = JSON.parse((await gw.deps.redis.get(accountRedisKeys.account(a.id)))!);
    t.is(record.status, 'inactive', `round ${round}: the record requests are judged by`);
    t.is(record.rpm, rpm);
    t.is(await models(k.key), 401, `round ${round}: a request after both answers is refused`);
  }
});

test.serial('an account record rebuilt from Mongo does not overwrite a change made meanwhile', async (t) => {
  const a = await gw.newAccount();
  const k = await gw.newKey(a.id);
  // Redis lost the record (a restart without its data): a request rebuilds it from a Mongo read that
  // predates a deactivation landing in between.
  await gw.deps.redis.del(accountRedisKeys.account(a.id));
  const stale = await gw.deps.db.Account.findById(a.id).lean();
  t.is((await gw.admin('PATCH', `/accounts/${a.id}`, { status: 'inactive' })).status, 200);
  const realFind = gw.deps.db.Account.findById.bind(gw.deps.db.Account);
  (gw.deps.db.Account as any).findById = () => ({ lean: async () => stale });
  try {
    await gw.deps.accounts.lookup(a.id);
  } finally {
    (gw.deps.db.Account as any).findById = realFind;
  }
  const lookup = new AuthLookup(gw.deps.redis, gw.deps.keys, gw.deps.accounts, gw.deps.wallet);
  t.is((await lookup.byHash(sha256Hex(k.key)))!.account!.status, 'inactive', 'the deactivation stands');
  t.is(await models(k.key), 401);
});
