// The sign-in limiter's counters (capabilities/accounts/sign-in.ts), against the real Redis; this file also runs on the
// 3-node Redis Cluster (dev/scripts/test.ts CLUSTER_SUITE): its counters live in different hash slots.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startGateway, type TestGateway } from '../helpers/stack';
import { SignInService, SIGN_IN_MAX_FAILURES, SIGN_IN_MAX_FAILURES_PER_ADDRESS } from '../../capabilities/accounts/sign-in';

let gw: TestGateway;
let signIn: SignInService;

test.before(async () => {
  gw = await startGateway();
  signIn = new SignInService(gw.deps.redis, gw.deps.people, gw.config.ADMIN_TOKEN);
});
test.after.always(async () => gw?.close());

test('past the failures allowed per email, even the right password is refused with 429 and retry-after', async (t) => {
  const email = `limit-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'right horse battery';
  const user = await gw.deps.people.createUser({ email, name: 'limit', password });
  const ip = `10.0.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  t.deepEqual(await signIn.withPassword(email, password, ip), { kind: 'user', userId: user._id });
  for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) {
    await t.throwsAsync(signIn.withPassword(email, 'wrong', ip), { message: /wrong email or password/ });
  }
  const refused = await t.throwsAsync(signIn.withPassword(email, password, ip), { message: /too many failed sign-in attempts/ });
  t.is((refused as any).status, 429);
  t.true(Number((refused as any).headers['retry-after']) > 0);
  // Another email from another address is not limited by these failures.
  const other = `other-${randomBytes(4).toString('hex')}@example.com`;
  const u2 = await gw.deps.people.createUser({ email: other, name: 'other', password });
  t.deepEqual(await signIn.withPassword(other, password, '10.9.9.9'), { kind: 'user', userId: u2._id });
});

test('failures from one address do not lock the person out from another; failures from many addresses together do', async (t) => {
  const email = `spread-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'right horse battery';
  const user = await gw.deps.people.createUser({ email, name: 'spread', password });
  const attacker = `10.2.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) await t.throwsAsync(signIn.withPassword(email, 'wrong', attacker));
  await t.throwsAsync(signIn.withPassword(email, password, attacker), { message: /too many failed sign-in attempts/ });
  t.deepEqual(await signIn.withPassword(email, password, '10.3.0.1'), { kind: 'user', userId: user._id });
  // Guesses spread over many addresses, under each address's own limit, stop at the email's limit.
  for (let i = SIGN_IN_MAX_FAILURES; i < SIGN_IN_MAX_FAILURES_PER_ADDRESS; i++) {
    await t.throwsAsync(signIn.withPassword(email, 'wrong', `10.4.${Math.floor(i / 5)}.${i % 5}`), { message: /wrong email or password/ });
  }
  await t.throwsAsync(signIn.withPassword(email, password, '10.3.0.1'), { message: /too many failed sign-in attempts/ });
});

test('the admin token: failures counted per address, then refused', async (t) => {
  const ip = `10.1.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  t.deepEqual(await signIn.withAdminToken(gw.config.ADMIN_TOKEN, ip), { kind: 'operator' });
  for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) await t.throwsAsync(signIn.withAdminToken('nope', ip));
  await t.throwsAsync(signIn.withAdminToken(gw.config.ADMIN_TOKEN, ip), { message: /too many failed sign-in attempts/ });
});
