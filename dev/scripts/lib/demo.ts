// The demo people `npm run dev` prints: a user with a personal account and a key, owner of a demo enterprise.
import { randomBytes } from 'node:crypto';

export interface Demo {
  accountId: string;
  key: string;
  email: string;
  password: string;
  userId: string;
  enterpriseId: string;
}

/**
 * The demo user (a personal account, with the demo key) and a demo
 * enterprise owned by that user, for the console. Reused from .data/dev.env
 * while they exist; the saved password is set again so it always works.
 */
export async function ensureDemo(gatewayUrl: string, adminToken: string, previous: Record<string, string>, say: (line: string) => void): Promise<Demo | undefined> {
  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${gatewayUrl}/admin/v1${p}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown>, text };
  };
  const must = <T extends { status: number; text: string }>(r: T, what: string): T => {
    if (r.status >= 300) throw new Error(`${what} failed: ${r.status} ${r.text}`);
    return r;
  };

  // The demo user and its personal account.
  let userId = previous.DEMO_USER_ID ?? '';
  let email = previous.DEMO_EMAIL ?? '';
  const password = previous.DEMO_PASSWORD || `demo-${randomBytes(6).toString('hex')}`;
  let accountId = '';
  if (userId && (await admin('GET', `/users/${userId}`)).status === 200) {
    must(await admin('PATCH', `/users/${userId}`, { password, disabled: false }), 'resetting the demo password');
    accountId = String((await admin('GET', `/users/${userId}`)).body.personal_account_id);
    say(`reusing demo user ${email}`);
  } else {
    email = 'demo@example.com';
    let created = await admin('POST', '/users', { email, name: 'Demo', password });
    if (created.status === 404) {
      say('warning: POST /admin/v1/users answered 404; no demo user');
      return undefined;
    }
    if (created.status === 409) {
      email = `demo-${randomBytes(3).toString('hex')}@example.com`;
      created = await admin('POST', '/users', { email, name: 'Demo', password });
    }
    must(created, 'creating the demo user');
    userId = String(created.body.id);
    accountId = String(created.body.personal_account_id);
    say(`created demo user ${email} (personal account ${accountId})`);
  }

  // A demo enterprise with the demo user as owner (agents, team bases).
  let enterpriseId = previous.DEMO_ENTERPRISE_ID ?? '';
  if (!enterpriseId || (await admin('GET', `/accounts/${enterpriseId}`)).status !== 200) {
    enterpriseId = String(must(await admin('POST', '/accounts', { name: 'Demo Enterprise', enterprise: true }), 'creating the demo enterprise').body.id);
    say(`created demo enterprise ${enterpriseId}`);
  }
  must(await admin('PUT', `/accounts/${enterpriseId}/members`, { user_id: userId, role: 'owner' }), 'making the demo user its owner');

  // The demo key, on the demo user's account.
  if (previous.API_KEY && previous.ACCOUNT_ID === accountId) {
    const res = await fetch(`${gatewayUrl}/v1/models`, { headers: { authorization: `Bearer ${previous.API_KEY}` } });
    await res.body?.cancel();
    if (res.status === 200) return { accountId, key: previous.API_KEY, email, password, userId, enterpriseId };
    say(`the saved demo key no longer works (${res.status}); creating a new one`);
  }
  const key = must(await admin('POST', `/accounts/${accountId}/keys`, { name: 'demo' }), 'creating the demo key');
  say(`created the demo key on ${accountId} (the signup grant is its balance)`);
  return { accountId, key: String(key.body.key), email, password, userId, enterpriseId };
}
