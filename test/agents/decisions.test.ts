// One decision per request: concurrent approvals of one agent-key request, and concurrent revocations or
// deletions of one key, give one 200 and 409 to the rest, with exactly one audit row per decision (before,
// every concurrent caller resumed the winner's claim, answered 200 and wrote its own audit row). And the
// generic key API and docs/agents.md agree about agent keys.
import test from 'ava';
import type { TestGateway } from '../helpers/stack';
import { adminAs, issueKey, newAgent, newEnterprise, startAgentGateway, type Enterprise } from './helpers';

let gw: TestGateway;
let ent: Enterprise;
test.before(async () => {
  gw = await startAgentGateway();
  ent = await newEnterprise(gw);
});
test.after.always(async () => gw?.close());

const audits = (agentKeyId: string, action: string) => gw.deps.db.conn.collection('agent_audit').countDocuments({ agent_key_id: agentKeyId, action });
const statuses = (calls: Array<{ status: number }>) => calls.map((c) => c.status).sort((a, b) => a - b);
const oneWinner = [200, ...Array(9).fill(409)];

test('10 concurrent approvals of one request: one 200, nine 409, one approve audit row, one key', async (t) => {
  const agent = await newAgent(gw, ent);
  const req = await adminAs(gw, ent.member, 'POST', `/agents/${agent.id}/key-requests`, { name: 'mine' });
  t.is(req.status, 201);
  const id = req.body.id;
  // Different caps: the one 200 carries its own, not someone else's.
  const calls = await Promise.all(Array.from({ length: 10 }, (_, i) => adminAs(gw, i % 2 ? ent.admin : ent.owner, 'POST', `/agent-keys/${id}/approve`, { spend_cap_usd: String(i + 1) })));
  t.deepEqual(statuses(calls), oneWinner, JSON.stringify(calls.map((c) => [c.status, c.body?.error?.message])));
  const won = calls.find((c) => c.status === 200)!;
  t.is(won.body.state, 'issued');
  t.is(await audits(id, 'approve'), 1);
  t.is(await gw.deps.db.ApiKey.countDocuments({ agent_id: agent.id }), 1);
  const stored = (await adminAs(gw, ent.admin, 'GET', `/agent-keys/${id}`)).body;
  t.is(stored.spend_cap_usd, won.body.spend_cap_usd);
  // A reject after the decision is 409 as well, and writes nothing.
  t.is((await adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/reject`, {})).status, 409);
  t.is(await audits(id, 'reject'), 0);
});

test('10 concurrent approve-or-reject calls: one decision, one audit row', async (t) => {
  const agent = await newAgent(gw, ent);
  const id = (await adminAs(gw, ent.member, 'POST', `/agents/${agent.id}/key-requests`, { name: 'mine' })).body.id;
  const calls = await Promise.all(Array.from({ length: 10 }, (_, i) => adminAs(gw, ent.admin, 'POST', `/agent-keys/${id}/${i % 2 ? 'reject' : 'approve'}`, i % 2 ? {} : { spend_cap_usd: '2' })));
  t.deepEqual(statuses(calls), oneWinner);
  t.is((await audits(id, 'approve')) + (await audits(id, 'reject')), 1);
});

test('10 concurrent revocations of one key: one 200, nine 409, one revoke audit row; the key stops working', async (t) => {
  const agent = await newAgent(gw, ent);
  const key = await issueKey(gw, ent, agent.id, { spend_cap_usd: '3' });
  const calls = await Promise.all(Array.from({ length: 10 }, () => adminAs(gw, ent.admin, 'POST', `/agent-keys/${key.id}/revoke`)));
  t.deepEqual(statuses(calls), oneWinner, JSON.stringify(calls.map((c) => [c.status, c.body?.error?.message])));
  t.is(await audits(key.id, 'revoke'), 1);
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });
  t.is(res.status, 401);
  await res.body?.cancel();
});

test('10 concurrent deletions of one key: one 200, nine 409, one delete audit row', async (t) => {
  const agent = await newAgent(gw, ent);
  const key = await issueKey(gw, ent, agent.id, { spend_cap_usd: '3' });
  const calls = await Promise.all(Array.from({ length: 10 }, () => adminAs(gw, ent.owner, 'DELETE', `/agent-keys/${key.id}`)));
  t.deepEqual(statuses(calls), oneWinner);
  t.is(await audits(key.id, 'delete'), 1);
  t.is(await audits(key.id, 'revoke'), 0);
});

test('the generic key API and docs/agents.md agree: the akey_ id is 409 there, the key_ record is read-only with kind "agent"', async (t) => {
  const agent = await newAgent(gw, ent);
  const key = await issueKey(gw, ent, agent.id, { spend_cap_usd: '3' });
  const apiKeyId = key.id.replace(/^akey_/, 'key_');
  for (const [method, path] of [['GET', `/keys/${key.id}`], ['PATCH', `/keys/${key.id}`], ['DELETE', `/keys/${key.id}`], ['GET', `/keys/${key.id}/reveal`]] as const) {
    const r = await gw.admin(method, path, method === 'PATCH' ? { enabled: false } : undefined);
    t.is(r.status, 409, `${method} ${path}`);
    t.true(r.body.error.message.includes(`/admin/v1/agent-keys/${key.id}`));
    t.true(r.body.error.message.includes(apiKeyId));
  }
  const view = await gw.admin('GET', `/keys/${apiKeyId}`);
  t.is(view.status, 200);
  t.like(view.body, { id: apiKeyId, kind: 'agent', agent_id: agent.id, agent_key_id: key.id, revealable: true });
  const listed = (await gw.admin('GET', `/accounts/${ent.id}/keys`)).body.data.find((k: any) => k.id === apiKeyId);
  t.like(listed, { kind: 'agent', agent_key_id: key.id });
  for (const [method, path] of [['PATCH', `/keys/${apiKeyId}`], ['DELETE', `/keys/${apiKeyId}`], ['GET', `/keys/${apiKeyId}/reveal`]] as const) {
    t.is((await gw.admin(method, path, method === 'PATCH' ? { enabled: false } : undefined)).status, 409, `${method} ${path}`);
  }
});
