import test from 'ava';
import { startGateway, type TestGateway } from '../helpers/stack';

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway();
});
test.after.always(async () => {
  await gw?.close();
});

test('a user gets a personal account with the signup grant, and can be made a member of an enterprise', async (t) => {
  const u = await gw.admin('POST', '/users', { email: 'Ann@Example.com', name: 'Ann', password: 'correct horse' });
  t.is(u.status, 201);
  t.is(u.body.email, 'ann@example.com');
  t.regex(u.body.personal_account_id, /^acct_/);
  const acct = await gw.admin('GET', `/accounts/${u.body.personal_account_id}`);
  t.is(acct.body.balance_usd, '40.44');
  t.is(acct.body.enterprise, false);

  const dup = await gw.admin('POST', '/users', { email: 'ann@example.com', name: 'Ann again' });
  t.is(dup.status, 409);

  const ent = await gw.newAccount({ name: 'Acme', enterprise: true });
  const m = await gw.admin('PUT', `/accounts/${ent.id}/members`, { user_id: u.body.id, role: 'admin' });
  t.is(m.status, 200);
  const again = await gw.admin('PUT', `/accounts/${ent.id}/members`, { user_id: u.body.id, role: 'member' });
  t.is(again.body.role, 'member');
  const members = await gw.admin('GET', `/accounts/${ent.id}/members`);
  t.deepEqual(members.body.data, [{ enterprise_id: ent.id, user_id: u.body.id, role: 'member' }]);
  const view = await gw.admin('GET', `/users/${u.body.id}`);
  t.deepEqual(view.body.memberships.map((x: any) => x.role), ['member']);

  // A personal account is not an enterprise.
  const bad = await gw.admin('PUT', `/accounts/${u.body.personal_account_id}/members`, { user_id: u.body.id, role: 'member' });
  t.is(bad.status, 400);
  t.is((await gw.admin('DELETE', `/accounts/${ent.id}/members/${u.body.id}`)).status, 204);
  t.is((await gw.admin('DELETE', `/accounts/${ent.id}/members/${u.body.id}`)).status, 404);
});

test('passwords are hashed and checked', async (t) => {
  const u = await gw.admin('POST', '/users', { email: 'bo@example.com', name: 'Bo', password: 'a long password' });
  const stored = await gw.deps.db.User.findById(u.body.id).lean();
  t.regex(stored!.password_hash!, /^scrypt\$/);
  t.truthy(await gw.deps.people.checkPassword('BO@example.com', 'a long password'));
  t.is(await gw.deps.people.checkPassword('bo@example.com', 'wrong'), null);
  await gw.admin('PATCH', `/users/${u.body.id}`, { disabled: true });
  t.is(await gw.deps.people.checkPassword('bo@example.com', 'a long password'), null);
  t.is((await gw.admin('POST', '/users', { email: 'not-an-email', name: 'x' })).status, 400);
});
