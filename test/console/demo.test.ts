import test from 'ava';
import { startGateway } from '../helpers/stack';
import { ensureDemo } from '../../dev/scripts/lib/demo';

test('npm run dev makes a demo user who can sign in, owns a demo enterprise, and is reused on the next start', async (t) => {
  const gw = await startGateway();
  t.teardown(() => gw.close());
  const first = await ensureDemo(gw.url, gw.config.ADMIN_TOKEN, {}, () => undefined);
  t.truthy(first);
  t.truthy(await gw.deps.people.checkPassword(first!.email, first!.password));
  t.is(await gw.deps.people.roleIn(first!.enterpriseId, first!.userId), 'owner');
  t.is((await gw.deps.keys.listByAccount(first!.accountId)).length, 1);
  const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${first!.key}` } });
  t.is(models.status, 200);

  const saved = {
    API_KEY: first!.key, ACCOUNT_ID: first!.accountId, DEMO_EMAIL: first!.email, DEMO_PASSWORD: first!.password,
    DEMO_USER_ID: first!.userId, DEMO_ENTERPRISE_ID: first!.enterpriseId,
  };
  const second = await ensureDemo(gw.url, gw.config.ADMIN_TOKEN, saved, () => undefined);
  t.deepEqual(second, first);
  t.is((await gw.deps.keys.listByAccount(first!.accountId)).length, 1);
});
