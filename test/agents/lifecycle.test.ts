import test from 'ava';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/stack';
import { post, usageRow } from '../chat/helpers';
import { formatCredits } from '../../domain/money';
import { adminAs, issueKey, newAgent, newEnterprise, seedTeamBase, startAgentGateway, type Enterprise } from './helpers';

let gw: TestGateway;
let ent: Enterprise;

test.before(async () => {
  gw = await startAgentGateway();
  ent = await newEnterprise(gw);
});
test.after.always(async () => gw?.close());

const chat = (key: string) => post(gw, '/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'hello' }], max_tokens: 10 }, { key });
const UA = { 'user-agent': 'lifecycle-test/1.0' };

test('roles: owners and admins manage agents and settings; members see published agents only; outsiders nothing', async (t) => {
  const e = await newEnterprise(gw);
  t.is((await adminAs(gw, e.member, 'POST', `/accounts/${e.id}/agents`, { name: 'A', system_prompt: 'p' })).status, 403);
  t.is((await adminAs(gw, e.outsider, 'POST', `/accounts/${e.id}/agents`, { name: 'A', system_prompt: 'p' })).status, 403);
  const draft = await adminAs(gw, e.admin, 'POST', `/accounts/${e.id}/agents`, { name: 'Draft', system_prompt: 'p' });
  t.is(draft.status, 201);
  t.is(draft.body.published, false);
  t.is(draft.body.created_by, e.admin);
  const live = await newAgent(gw, e, { name: 'Live' });
  t.deepEqual((await adminAs(gw, e.member, 'GET', `/accounts/${e.id}/agents`)).body.data.map((a: any) => a.name), ['Live']);
  t.deepEqual((await adminAs(gw, e.admin, 'GET', `/accounts/${e.id}/agents`)).body.data.map((a: any) => a.name).sort(), ['Draft', 'Live']);
  t.is((await adminAs(gw, e.member, 'GET', `/agents/${draft.body.id}`)).status, 404);
  t.is((await adminAs(gw, e.member, 'GET', `/agents/${live.id}`)).status, 200);
  t.is((await adminAs(gw, e.outsider, 'GET', `/accounts/${e.id}/agents`)).status, 403);
  t.is((await adminAs(gw, e.member, 'PATCH', `/agents/${live.id}`, { name: 'x' })).status, 403);
  t.is((await adminAs(gw, e.member, 'PUT', `/accounts/${e.id}/agent-settings`, { default_model: 'gpt-5.1' })).status, 403);
  // Agents belong to enterprises.
  const personal = await gw.newAccount();
  t.is((await adminAs(gw, null, 'POST', `/accounts/${personal.id}/agents`, { name: 'A', system_prompt: 'p' })).status, 400);
});

test('settings: the whitelist binds agent models; the model falls back to the enterprise default, then the platform default', async (t) => {
  const e = await newEnterprise(gw);
  const s = await adminAs(gw, e.owner, 'PUT', `/accounts/${e.id}/agent-settings`, { model_whitelist: ['gpt-5-mini', 'gpt-5.1'], default_model: 'gpt-5.1' });
  t.is(s.status, 200);
  t.deepEqual(s.body.model_whitelist, ['gpt-5-mini', 'gpt-5.1']);
  const off = await adminAs(gw, e.owner, 'POST', `/accounts/${e.id}/agents`, { name: 'A', system_prompt: 'p', model_id: 'claude-sonnet-4-5' });
  t.is(off.status, 400);
  t.is(off.body.error.code, 'model_not_allowed');
  t.is((await adminAs(gw, e.owner, 'POST', `/accounts/${e.id}/agents`, { name: 'A', system_prompt: 'p', model_id: 'no-such-model' })).body.error.code, 'model_not_found');
  t.is((await adminAs(gw, e.owner, 'PUT', `/accounts/${e.id}/agent-settings`, { default_model: 'claude-sonnet-4-5' })).status, 400);

  const agent = await newAgent(gw, e); // no model: the enterprise default
  const { key } = await issueKey(gw, e, agent.id);
  const r = await chat(key);
  t.is(r.status, 200);
  t.is(r.json.model, 'gpt-5.1');
  await adminAs(gw, e.owner, 'PUT', `/accounts/${e.id}/agent-settings`, { default_model: null, model_whitelist: null });
  const r2 = await chat(key);
  t.is(r2.json.model, gw.config.AGENT_DEFAULT_MODEL);

  // A whitelist that leaves the agent's model out: its keys are refused (403), and no key to it is issued or approved.
  // (the agent now runs on the platform default: a whitelist without it)
  t.is((await adminAs(gw, e.owner, 'PUT', `/accounts/${e.id}/agent-settings`, { model_whitelist: ['gpt-5.1'] })).status, 200);
  t.not(gw.config.AGENT_DEFAULT_MODEL, 'gpt-5.1');
  const r3 = await chat(key);
  t.is(r3.status, 403);
  const denied = await adminAs(gw, e.admin, 'POST', `/agents/${agent.id}/keys`, { name: 'off the list' });
  t.is(denied.status, 403);
  t.regex(denied.body.error.message, /outside the enterprise's model whitelist/);
  const asked = await adminAs(gw, e.member, 'POST', `/agents/${agent.id}/key-requests`, { name: 'please' });
  t.is(asked.status, 201);
  t.is((await adminAs(gw, e.admin, 'POST', `/agent-keys/${asked.body.id}/approve`, { spend_cap_usd: '1' })).status, 403);
  await adminAs(gw, e.owner, 'PUT', `/accounts/${e.id}/agent-settings`, { model_whitelist: null });
  t.is((await adminAs(gw, e.admin, 'POST', `/agent-keys/${asked.body.id}/approve`, { spend_cap_usd: '1' })).status, 200, 'approvable again once the model is allowed');
});

test('attaching bases: only bases the agent\'s creator may read; detach', async (t) => {
  const e = await newEnterprise(gw);
  await seedTeamBase(gw, e.id, 'open', [{ id: 'p1', title: 'Open', body: 'open page' }]);
  await seedTeamBase(gw, e.id, 'secret', [{ id: 'p2', title: 'Secret', body: 'secret page' }], [e.member]);
  const agent = await newAgent(gw, e);
  t.is((await adminAs(gw, e.owner, 'PUT', `/agents/${agent.id}/knowledge-bases/secret`)).status, 404);
  t.is((await adminAs(gw, e.owner, 'PUT', `/agents/${agent.id}/knowledge-bases/nope`)).status, 404);
  const attached = await adminAs(gw, e.owner, 'PUT', `/agents/${agent.id}/knowledge-bases/open`);
  t.deepEqual(attached.body.knowledge_bases, ['open']);
  t.deepEqual((await adminAs(gw, e.owner, 'DELETE', `/agents/${agent.id}/knowledge-bases/open`)).body.knowledge_bases, []);
});

test('request -> approve (cap mandatory) -> the holder sees and views it -> revoke: every step audited', async (t) => {
  const agent = await newAgent(gw, ent, { model_id: 'gpt-5-mini' });
  const draft = await adminAs(gw, ent.owner, 'POST', `/accounts/${ent.id}/agents`, { name: 'Draft', system_prompt: 'p' });
  t.is((await adminAs(gw, ent.member, 'POST', `/agents/${draft.body.id}/key-requests`, { name: 'mine' })).status, 403, 'unpublished agent');
  t.is((await adminAs(gw, null, 'POST', `/agents/${agent.id}/key-requests`, { name: 'mine' })).status, 400, 'a request needs a user');
  t.is((await adminAs(gw, ent.outsider, 'POST', `/agents/${agent.id}/key-requests`, { name: 'mine' })).status, 403);

  const req = await adminAs(gw, ent.member, 'POST', `/agents/${agent.id}/key-requests`, { name: 'mine', note: 'for the help desk' }, UA);
  t.is(req.status, 201);
  t.is(req.body.state, 'requested');
  t.is(req.body.prefix, null);
  const id = req.body.id;
  const mine = await adminAs(gw, ent.member, 'GET', `/users/${ent.member}/agent-keys`);
  t.deepEqual(mine.body.data.map((k: any) => [k.id, k.state]), [[id, 'requested']]);
  t.is((await adminAs(gw, ent.member2, 'GET', `/users/${ent.member}/agent-keys`)).status, 403);
  t.is((await adminAs(gw, ent.member, 'GET', `/agent-keys/${id}/plaintext`)).status, 409);

  // Only owners and admins approve, and only with a cap.
  t.is((await adminAs(gw, ent.member, 'POST', `/agent-keys/${id}/approve`, { spend_cap_usd: '5' })).status, 403);
  t.is((await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/approve`, {})).status, 400);
  t.is((await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/approve`, { spend_cap_usd: '0' })).status, 400);
  const ok = await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/approve`, { spend_cap_usd: '5' }, UA);
  t.is(ok.status, 200);
  t.is(ok.body.state, 'issued');
  t.is(ok.body.spend_cap_usd, '5.00');
  t.false('key' in ok.body, 'the approver does not get the plaintext');
  t.is((await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/approve`, { spend_cap_usd: '5' })).status, 409);
  t.is((await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/reject`, {})).status, 409);

  const listed = (await adminAs(gw, ent.member, 'GET', `/users/${ent.member}/agent-keys`)).body.data[0];
  t.is(listed.state, 'issued');
  t.regex(listed.prefix, /^sk-/);
  t.is((await adminAs(gw, ent.member2, 'GET', `/agent-keys/${id}/plaintext`)).status, 404, 'another member cannot see it');
  const view = await adminAs(gw, ent.member, 'GET', `/agent-keys/${id}/plaintext`, undefined, UA);
  t.is(view.status, 200);
  t.regex(view.body.key, /^sk-[a-z0-9]{8}-[0-9a-f]{64}$/);
  t.is(view.body.key.length, 76);
  const { data, response } = await new OpenAI({ apiKey: view.body.key, baseURL: `${gw.url}/v1`, maxRetries: 0 }).chat.completions
    .create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  t.is(data.object, 'chat.completion');
  await usageRow(gw, response.headers.get('x-gateway-trace')!);
  t.not((await adminAs(gw, ent.admin, 'GET', `/agent-keys/${id}`)).body.used_usd, '0');

  // The generic key API cannot undo a revocation or touch an agent key.
  const apiKeyId = (await gw.deps.db.ApiKey.findOne({ agent_id: agent.id }).lean())!._id;
  t.is((await gw.admin('PATCH', `/keys/${apiKeyId}`, { enabled: false })).status, 409);
  t.is((await gw.admin('GET', `/keys/${apiKeyId}/reveal`)).status, 409, 'no unaudited view');
  t.is((await gw.admin('DELETE', `/keys/${apiKeyId}`)).status, 409);

  t.is((await adminAs(gw, ent.member, 'POST', `/agent-keys/${id}/revoke`)).status, 403);
  const revoked = await adminAs(gw, ent.owner, 'POST', `/agent-keys/${id}/revoke`, undefined, UA);
  t.is(revoked.body.state, 'revoked');
  t.is(revoked.body.revoked_by, ent.owner);
  t.is((await chat(view.body.key)).status, 401);
  t.is((await adminAs(gw, ent.owner, 'POST', `/agent-keys/${id}/revoke`)).status, 409);
  t.is((await adminAs(gw, ent.owner, 'POST', `/agent-keys/${id}/approve`, { spend_cap_usd: '5' })).status, 409, 'cannot be restored');
  t.is((await gw.admin('PATCH', `/keys/${apiKeyId}`, { enabled: true })).status, 409, 'cannot be re-enabled');
  t.is((await chat(view.body.key)).status, 401);

  const audit = await adminAs(gw, ent.admin, 'GET', `/accounts/${ent.id}/agent-keys/audit?agent_key_id=${id}`);
  t.is(audit.status, 200);
  const rows = [...audit.body.data].reverse();
  t.deepEqual(rows.map((r: any) => [r.action, r.actor.user_id]), [
    ['request', ent.member], ['approve', ent.admin], ['view_plaintext', ent.member], ['revoke', ent.owner],
  ]);
  for (const r of rows) {
    t.is(r.agent_key_id, id);
    t.is(r.user_agent, 'lifecycle-test/1.0');
    t.truthy(r.ip);
    t.true(Number.isInteger(r.created_at) && Math.abs(r.created_at - Date.now() / 1000) < 600, 'created_at in Unix seconds');
  }
  t.is(rows[1].detail.spend_cap_nano, 5_000_000_000);
  t.is((await adminAs(gw, ent.member, 'GET', `/accounts/${ent.id}/agent-keys/audit`)).status, 403);
  // Append-only: no route changes it.
  for (const method of ['PATCH', 'DELETE', 'PUT', 'POST']) {
    const r = await adminAs(gw, null, method, `/accounts/${ent.id}/agent-keys/audit`, method === 'DELETE' ? undefined : {});
    t.true(r.status === 404 || r.status === 405, `${method} answered ${r.status}`);
  }
  t.is(await gw.deps.db.conn.collection('agent_audit').countDocuments({ agent_key_id: id }), 4);
});

test('approve and reject check the actor\'s role before the body: a member gets 403 whatever the body, an unknown key 404 (security audit)', async (t) => {
  const ent = await newEnterprise(gw); // its own: the other tests list the shared enterprise's keys
  const agent = await newAgent(gw, ent);
  const req = await adminAs(gw, ent.member, 'POST', `/agents/${agent.id}/key-requests`, { name: 'asked' });
  t.is(req.status, 201);
  const id = req.body.id;
  const raw = (who: string, path: string, text: string) => fetch(`${gw.url}/admin/v1${path}`, {
    method: 'POST', body: text,
    headers: { authorization: `Bearer ${gw.config.ADMIN_TOKEN}`, 'content-type': 'application/json', 'x-acting-user': who },
  });
  for (const who of [ent.member, ent.member2, ent.outsider]) {
    for (const body of [{}, { spend_cap_usd: '0' }, { spend_cap_usd: 'lots' }, { spend_cap_usd: '5', extra: 1 }]) {
      const r = await adminAs(gw, who, 'POST', `/agent-keys/${id}/approve`, body);
      t.is(r.status, 403, `${who} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      t.is(r.body.error.code, 'permission_denied');
    }
    t.is((await adminAs(gw, who, 'POST', `/agent-keys/${id}/reject`, { reason: 1 })).status, 403);
    t.is((await raw(who, `/agent-keys/${id}/approve`, '{not json')).status, 403);
  }
  t.is((await adminAs(gw, ent.member, 'POST', '/agent-keys/akey_nope/approve', {})).status, 404);
  // The enterprise's admin still gets the body's 400s, and the request stays undecided by all of the above.
  t.is((await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/approve`, {})).status, 400);
  t.is((await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/approve`, { spend_cap_usd: '0' })).status, 400);
  t.is((await adminAs(gw, ent.admin, 'GET', `/agent-keys/${id}`)).body.state, 'requested');
  t.is((await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/approve`, { spend_cap_usd: '1' })).status, 200);
});

test('reject: the request ends rejected, audited, and cannot be approved later', async (t) => {
  const agent = await newAgent(gw, ent);
  const req = await adminAs(gw, ent.member2, 'POST', `/agents/${agent.id}/key-requests`, { name: 'please' });
  const r = await adminAs(gw, ent.owner, 'POST', `/agent-keys/${req.body.id}/reject`, { reason: 'not needed' });
  t.is(r.status, 200);
  t.is(r.body.state, 'rejected');
  t.is(r.body.reject_reason, 'not needed');
  t.is((await adminAs(gw, ent.owner, 'POST', `/agent-keys/${req.body.id}/approve`, { spend_cap_usd: '1' })).status, 409);
  const audit = (await adminAs(gw, ent.owner, 'GET', `/accounts/${ent.id}/agent-keys/audit?agent_key_id=${req.body.id}`)).body.data;
  t.deepEqual(audit.map((a: any) => a.action), ['reject', 'request']);
  const pending = (await adminAs(gw, ent.admin, 'GET', `/accounts/${ent.id}/agent-keys?state=rejected`)).body.data;
  t.true(pending.some((k: any) => k.id === req.body.id));
});

test('direct issue: plaintext once, later viewable (each view audited); delete hides it and refuses the next call', async (t) => {
  const agent = await newAgent(gw, ent);
  const member = await adminAs(gw, ent.member, 'POST', `/agents/${agent.id}/keys`, { name: 'nope' });
  t.is(member.status, 403, 'members do not issue');
  const issued = await adminAs(gw, ent.admin, 'POST', `/agents/${agent.id}/keys`, { name: 'kiosk' }, UA);
  t.is(issued.status, 201);
  t.is(issued.body.state, 'issued');
  t.is(issued.body.spend_cap_usd, null, 'the cap is optional for admins');
  t.is(issued.body.holder_user_id, ent.admin);
  const plaintext = issued.body.key;
  t.is((await chat(plaintext)).status, 200);
  const list = (await adminAs(gw, ent.admin, 'GET', `/accounts/${ent.id}/agent-keys?agent_id=${agent.id}`)).body.data;
  t.deepEqual(list.map((k: any) => [k.id, 'key' in k]), [[issued.body.id, false]]);
  for (let i = 0; i < 2; i++) t.is((await adminAs(gw, ent.owner, 'GET', `/agent-keys/${issued.body.id}/plaintext`)).body.key, plaintext);
  const del = await adminAs(gw, ent.owner, 'DELETE', `/agent-keys/${issued.body.id}`);
  t.is(del.status, 200);
  t.is(del.body.deleted, true);
  const refused = await chat(plaintext);
  t.is(refused.status, 401);
  t.is(refused.json.error.code, 'invalid_api_key');
  t.deepEqual((await adminAs(gw, ent.admin, 'GET', `/accounts/${ent.id}/agent-keys?agent_id=${agent.id}`)).body.data, []);
  const audit = (await adminAs(gw, ent.owner, 'GET', `/accounts/${ent.id}/agent-keys/audit?agent_key_id=${issued.body.id}`)).body.data.reverse();
  t.deepEqual(audit.map((a: any) => a.action), ['issue', 'view_plaintext', 'view_plaintext', 'delete']);
  t.is(audit[0].detail.plaintext_shown, true);
});

test('escrow: the cap is held from the enterprise at issuance, calls draw on it, the rest returns at revocation', async (t) => {
  const e = await newEnterprise(gw);
  await adminAs(gw, e.owner, 'PUT', `/accounts/${e.id}/agent-settings`, { key_billing: 'escrow' });
  const agent = await newAgent(gw, e, { model_id: 'gpt-5-mini' });
  const start = await gw.deps.wallet.balance(e.id);
  t.is((await adminAs(gw, e.admin, 'POST', `/agents/${agent.id}/keys`, { name: 'no cap' })).status, 400, 'an escrow needs a cap');
  t.is((await adminAs(gw, e.admin, 'POST', `/agents/${agent.id}/keys`, { name: 'too big', spend_cap_usd: '1000' })).status, 402);
  t.is(await gw.deps.wallet.balance(e.id), start, 'a refused hold moves nothing');

  const req = await adminAs(gw, e.member, 'POST', `/agents/${agent.id}/key-requests`, { name: 'escrowed' });
  const ok = await adminAs(gw, e.admin, 'POST', `/agent-keys/${req.body.id}/approve`, { spend_cap_usd: '2' });
  t.is(ok.body.billing, 'escrow');
  t.is(ok.body.escrow_balance_usd, '2.00');
  t.is(await gw.deps.wallet.balance(e.id), start - 2_000_000_000);
  const key = (await adminAs(gw, e.member, 'GET', `/agent-keys/${req.body.id}/plaintext`)).body.key;
  let cost = 0;
  for (let i = 0; i < 3; i++) {
    const r = await chat(key);
    t.is(r.status, 200);
    cost += (await usageRow(gw, r.trace)).cost_nano;
  }
  t.true(cost > 0);
  t.is(await gw.deps.wallet.balance(e.id), start - 2_000_000_000, 'calls draw on the escrow, not the enterprise balance');
  const revoked = await adminAs(gw, e.owner, 'POST', `/agent-keys/${req.body.id}/revoke`);
  t.is(revoked.body.released_usd, formatCredits(2_000_000_000 - cost));
  t.is(await gw.deps.wallet.balance(e.id), start - cost, 'the rest came back');
  // The ledger adds up: enterprise + escrow = start - cost.
  const sum = async (account: string) => (await gw.deps.db.Ledger.find({ account_id: account }).lean()).reduce((a, r) => a + r.amount_nano, 0);
  t.is(await sum(e.id), start - cost);
  t.is(await sum(`esc_${req.body.id}`), 0);
});

test('per-agent usage: requests, tokens and cost by day, for owners and admins', async (t) => {
  const agent = await newAgent(gw, ent, { model_id: 'gpt-5-mini' });
  const { key } = await issueKey(gw, ent, agent.id);
  let cost = 0;
  let input = 0;
  for (let i = 0; i < 3; i++) {
    const r = await chat(key);
    const row = await usageRow(gw, r.trace);
    cost += row.cost_nano;
    input += row.input_tokens;
  }
  const u = await adminAs(gw, ent.admin, 'GET', `/agents/${agent.id}/usage?days=7`);
  t.is(u.status, 200);
  t.is(u.body.totals.requests, 3);
  t.is(u.body.totals.input_tokens, input);
  t.is(u.body.totals.cost_usd, formatCredits(cost));
  t.is(u.body.days.length, 1);
  t.is(u.body.days[0].date, new Date().toISOString().slice(0, 10));
  t.is((await adminAs(gw, ent.member, 'GET', `/agents/${agent.id}/usage`)).status, 403);
});
