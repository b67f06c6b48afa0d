import test from 'ava';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { startGateway, type TestGateway } from '../helpers/stack';
import { keyId, keyRing } from '../../platform/secrets';
import { channelCredentials, storedRecord } from '../../capabilities/catalogue/records';
import Stripe from 'stripe';
import { webhookSecret } from '../../capabilities/billing/select';
import { WebhookSecrets } from '../../capabilities/webhooks/secrets';

/**
 * docs/operations.md, key rotation, as an operator runs it: values sealed under the old
 * KEY_ENCRYPTION_KEY stay readable with it in KEY_ENCRYPTION_KEYS_PREVIOUS, `npm run reseal` moves
 * every one (API keys, channel and webhook secrets) to the new key, after which the old key is not
 * needed; an ADMIN_TOKEN rotation with STRIPE_WEBHOOK_SECRET set (as production always has it) keeps the payment webhook secret.
 */
const run = promisify(execFile);
const oldKey = randomBytes(32).toString('hex');
const newKey = randomBytes(32).toString('hex');
const gateways: TestGateway[] = [];
test.after.always(async () => {
  await Promise.all(gateways.map((g) => g.close().catch(() => undefined)));
});

async function gateway(overrides: Record<string, string>): Promise<TestGateway> {
  const gw = await startGateway(overrides);
  gateways.push(gw);
  return gw;
}

/** The channel's key as the catalogue unseals it (with the gateway's keyring). */
async function channelKey(gw: TestGateway): Promise<string | undefined> {
  const doc = await gw.deps.db.Channel.findById('rotating').lean();
  return channelCredentials(storedRecord(doc!.doc), { vars: {}, upstreamKeys: {}, encryptionKey: keyRing(gw.config) }).api_key;
}

/** Every sealed value's key id in the store. */
async function kids(gw: TestGateway): Promise<string[]> {
  const db = gw.deps.db.conn.db!;
  const keys = await db.collection('api_keys').find({ secret: { $ne: null } }).toArray();
  const channels = await db.collection('channels').find({ 'doc.credentials.type': 'secret' }).toArray();
  const webhooks = await db.collection('webhook_secrets').find({}).toArray();
  return [...keys.map((k) => k.secret.kid), ...channels.map((c) => c.doc.credentials.sealed.kid), ...webhooks.map((w) => w.current.sealed.kid)];
}

async function reseal(gw: TestGateway, env: Record<string, string>, args: string[] = []): Promise<{ code: number; lines: any[]; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'dev/scripts/reseal.ts', ...args], { env: { ...process.env, MONGO_URL: gw.config.MONGO_URL, ...env } });
    return { code: 0, lines: stdout.trim().split('\n').map((l) => JSON.parse(l)), stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, lines: e.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)), stderr: e.stderr };
  }
}

test('KEY_ENCRYPTION_KEY rotation: old values readable from the keyring, re-sealed by npm run reseal, then the old key retired', async (t) => {
  const before = await gateway({ KEY_ENCRYPTION_KEY: oldKey });
  const shared = { MONGO_URL: before.config.MONGO_URL, REDIS_PREFIX: before.config.REDIS_PREFIX, ADMIN_TOKEN: before.config.ADMIN_TOKEN };
  const account = await before.newAccount();
  const key = await before.newKey(account.id);
  const channelSecret = 'sk-channel-secret-for-rotation-0001';
  t.is((await before.admin('POST', '/channels', { id: 'rotating', vendor: 'openai', adapter: 'chat-completions', base_url: 'http://127.0.0.1:9/v1', credentials: { secret: channelSecret }, models: ['gpt-4.1'] })).status, 201);
  const whsec = (await before.admin('POST', `/accounts/${account.id}/webhook-secret`)).body.secret as string;
  t.deepEqual([...new Set(await kids(before))], [keyId(oldKey)], 'every value names the key that sealed it');

  // Step 1: the new key first, the old one in the keyring. Everything still reads.
  const during = await gateway({ ...shared, KEY_ENCRYPTION_KEY: newKey, KEY_ENCRYPTION_KEYS_PREVIOUS: oldKey });
  t.is((await during.admin('GET', `/keys/${key.id}/reveal`)).body.key, key.key);
  t.is(await channelKey(during), channelSecret);
  t.deepEqual(await new WebhookSecrets({ db: during.deps.db, config: during.config }).signingSecrets(account.id), [whsec]);
  // Without the old key the same values are unreadable (the keyring is what keeps them).
  const withoutOld = await gateway({ ...shared, KEY_ENCRYPTION_KEY: newKey });
  t.is((await withoutOld.admin('GET', `/keys/${key.id}/reveal`)).status, 500);

  // Step 2: npm run reseal (a dry run first counts without writing).
  const dry = await reseal(during, { KEY_ENCRYPTION_KEY: newKey, KEY_ENCRYPTION_KEYS_PREVIOUS: oldKey }, ['--dry-run']);
  t.is(dry.code, 0);
  t.is(dry.lines.at(-1).to_reseal, 3);
  t.deepEqual([...new Set(await kids(during))], [keyId(oldKey)], 'a dry run writes nothing');
  const done = await reseal(during, { KEY_ENCRYPTION_KEY: newKey, KEY_ENCRYPTION_KEYS_PREVIOUS: oldKey });
  t.is(done.code, 0, done.stderr);
  const summary = done.lines.at(-1);
  t.is(summary.resealed, 3, JSON.stringify(done.lines));
  t.is(summary.left, 0);
  t.deepEqual(summary.previous_keys, [keyId(oldKey)]);
  t.deepEqual([...new Set(await kids(during))], [keyId(newKey)]);
  t.regex(done.stderr, /KEY_ENCRYPTION_KEYS_PREVIOUS can now be removed/);

  // Step 3: the old key retired. Everything reads with the new key alone; a second reseal has nothing to do.
  t.is((await withoutOld.admin('GET', `/keys/${key.id}/reveal`)).body.key, key.key);
  t.deepEqual(await new WebhookSecrets({ db: withoutOld.deps.db, config: withoutOld.config }).signingSecrets(account.id), [whsec]);
  t.is(await channelKey(withoutOld), channelSecret);
  const res = await fetch(`${withoutOld.url}/v1/key/balance`, { headers: { authorization: `Bearer ${key.key}` } });
  t.is(res.status, 200);
  const again = await reseal(withoutOld, { KEY_ENCRYPTION_KEY: newKey });
  t.is(again.lines.at(-1).resealed, 0);
  t.is(again.code, 0);
});

test('reseal names values no key of the ring opens, and exits 1', async (t) => {
  const gw = await gateway({ KEY_ENCRYPTION_KEY: oldKey });
  const account = await gw.newAccount();
  await gw.newKey(account.id);
  const out = await reseal(gw, { KEY_ENCRYPTION_KEY: newKey });
  t.is(out.code, 1);
  t.is(out.lines.find((l) => l.collection === 'api_keys').unreadable.length, 1);
  t.regex(out.stderr, /KEY_ENCRYPTION_KEYS_PREVIOUS/);
});

test('ADMIN_TOKEN rotation with STRIPE_WEBHOOK_SECRET set changes no derived secret', async (t) => {
  const before = await gateway({});
  const pinned = webhookSecret(before.config)!; // what docs/operations.md's node -e one-liner prints
  const { stdout } = await run(process.execPath, ['-e', "console.log('whsec_' + require('node:crypto').createHmac('sha256', process.env.ADMIN_TOKEN).update('payment-webhook').digest('hex'))"], { env: { ...process.env, ADMIN_TOKEN: before.config.ADMIN_TOKEN } });
  t.is(stdout.trim(), pinned);
  const newToken = `rotated-${randomBytes(16).toString('hex')}`;
  const after = await gateway({ MONGO_URL: before.config.MONGO_URL, REDIS_PREFIX: before.config.REDIS_PREFIX, KEY_ENCRYPTION_KEY: before.config.KEY_ENCRYPTION_KEY, ADMIN_TOKEN: newToken, STRIPE_WEBHOOK_SECRET: pinned });
  t.is(webhookSecret(after.config), pinned);
  // An event signed with the secret the processor was given before the rotation is still taken.
  const payload = JSON.stringify({ id: `evt_rotation_${randomBytes(4).toString('hex')}`, object: 'event', type: 'checkout.session.expired', data: { object: { id: 'cs_rotation', object: 'checkout.session', client_reference_id: 'top_none', metadata: {}, payment_status: 'unpaid' } } });
  const stripe = new Stripe('sk_test_rotation');
  const post = (secret: string) => fetch(`${after.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret }) }, body: payload });
  const res = await post(pinned);
  t.is(res.status, 200, await res.text());
  // Unpinned, the rotation would have changed it: the secret the new token derives is refused.
  t.is((await post(webhookSecret({ ...after.config, STRIPE_WEBHOOK_SECRET: undefined })!)).status, 400);
  // The old token is refused, the new one taken.
  const old = await fetch(`${after.url}/admin/v1/accounts?limit=1`, { headers: { authorization: `Bearer ${before.config.ADMIN_TOKEN}` } });
  t.is(old.status, 401);
  const fresh = await fetch(`${after.url}/admin/v1/accounts?limit=1`, { headers: { authorization: `Bearer ${newToken}` } });
  t.is(fresh.status, 200);
});
