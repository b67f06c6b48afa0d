// Escrow of agent keys under concurrency: calls in flight when their key is revoked settle on the escrow,
// and only then does its rest go back to the enterprise: exact to the nano-credit, the escrow ending at 0.
// Also runs on the 3-node Redis Cluster (dev/scripts/test.ts CLUSTER_SUITE).
import test from 'ava';
import type { TestGateway } from '../helpers/stack';
import { post } from '../chat/helpers';
import { adminAs, newAgent, newEnterprise, startAgentGateway, type Enterprise } from './helpers';
import type { AgentKeyDoc } from '../../capabilities/agents/store';

let gw: TestGateway;

test.before(async () => {
  gw = await startAgentGateway();
});
test.after.always(async () => gw?.close());

const CAP_NANO = 2_000_000_000;

/** An escrow-billed enterprise, an agent, a key with a $2 escrow; the enterprise balance before it. */
async function escrowKey(): Promise<{ e: Enterprise; id: string; key: string; start: number }> {
  const e = await newEnterprise(gw);
  await adminAs(gw, e.owner, 'PUT', `/accounts/${e.id}/agent-settings`, { key_billing: 'escrow' });
  const agent = await newAgent(gw, e, { model_id: 'gpt-5-mini' });
  const start = await gw.deps.wallet.balance(e.id);
  const r = await adminAs(gw, e.admin, 'POST', `/agents/${agent.id}/keys`, { name: 'escrowed', spend_cap_usd: '2' });
  if (r.status !== 201) throw new Error(`key not issued: ${JSON.stringify(r.body)}`);
  return { e, id: r.body.id, key: r.body.key, start };
}

const keyDoc = (id: string) => gw.deps.db.conn.collection<AgentKeyDoc>('agent_keys').findOne({ _id: id });

async function releasedNano(id: string, ms = 10_000): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const doc = await keyDoc(id);
    if (typeof doc?.released_nano === 'number') return doc.released_nano;
    if (Date.now() > until) throw new Error(`escrow of ${id} not released`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Enterprise and escrow, from the ledger (the truth) and the projection; the charges the escrow paid. */
async function books(enterpriseId: string, agentKeyId: string) {
  const esc = `esc_${agentKeyId}`;
  const [entLedger, escLedger] = [await gw.deps.wallet.ledgerTotals(enterpriseId), await gw.deps.wallet.ledgerTotals(esc)];
  const charges = (await gw.deps.db.Ledger.find({ account_id: esc, kind: 'charge' }).lean()).reduce((a, r) => a - r.amount_nano, 0);
  return {
    enterprise: entLedger.balanceNano, escrow: escLedger.balanceNano, charges,
    enterpriseProjected: await gw.deps.wallet.balance(enterpriseId), escrowProjected: await gw.deps.wallet.balance(esc),
  };
}

test.serial('calls in flight at revocation settle on the escrow before its rest returns: the books add up to the nano', async (t) => {
  const { e, id, key, start } = await escrowKey();
  // Slow streams: every call is still running when the key is revoked.
  await gw.control('POST', '/latency', { ttft_ms: 300, token_delay_ms: 40 });
  t.teardown(() => gw.control('DELETE', '/latency'));
  const body = { model: 'x', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, stream: true };
  const ended: Array<{ status: number; at: number }> = [];
  const calls = Array.from({ length: 8 }, () => post(gw, '/v1/chat/completions', body, { key }).then((r) => {
    ended.push({ status: r.status, at: Date.now() });
    return r;
  }));
  await new Promise((r) => setTimeout(r, 150));
  const revokedAt = Date.now();
  const revoked = await adminAs(gw, e.owner, 'POST', `/agent-keys/${id}/revoke`);
  t.is(revoked.status, 200);
  const replies = await Promise.all(calls);
  t.true(ended.some((c) => c.status === 200 && c.at > revokedAt), 'calls were in flight during the revocation, and were served');
  for (const r of replies) t.true(r.status === 200 || r.status === 401, `a call answered ${r.status}`);
  const after = await post(gw, '/v1/chat/completions', body, { key });
  t.is(after.status, 401, 'the next request after the revocation is refused');

  const released = await releasedNano(id);
  const b = await books(e.id, id);
  t.true(b.charges > 0);
  t.is(released, CAP_NANO - b.charges, 'the release is the cap less every charge, those of the calls in flight included');
  t.is(b.escrow, 0, 'the escrow ends at exactly 0');
  t.is(b.escrowProjected, 0);
  t.is(b.enterprise, start - b.charges, 'enterprise + escrow + charges == before');
  t.is(b.enterpriseProjected, b.enterprise);
});

test.serial('the call that settles last releases the rest; a revoked escrow admits no new call', async (t) => {
  const { e, id, start } = await escrowKey();
  const esc = `esc_${id}`;
  const flight = await gw.deps.agents.keys.beginCall(esc, 'req_slow_call');
  t.truthy(flight);
  const revoked = await adminAs(gw, e.owner, 'POST', `/agent-keys/${id}/revoke`);
  t.is(revoked.status, 200);
  t.is(revoked.body.released_usd, null, 'a call is still in flight: the release waits for it');
  const audit = (await adminAs(gw, e.owner, 'GET', `/accounts/${e.id}/agent-keys/audit?agent_key_id=${id}`)).body.data;
  t.is(audit[0].action, 'revoke');
  t.is(audit[0].detail.release, 'pending');
  await t.throwsAsync(gw.deps.agents.keys.beginCall(esc, 'req_late'), { message: /revoked/ }, 'no call enters a closed escrow');
  // The call in flight settles its charge on the escrow, then leaves: it releases the rest.
  const charge = 123_456_789;
  await gw.deps.wallet.applyAhead({ opId: 'req_slow_call:charge', accountId: esc, keyId: 'k', kind: 'charge', amountNano: -charge, keySpendNano: charge, ref: 'req_slow_call' });
  await flight!.leave();
  t.is(await releasedNano(id, 0), CAP_NANO - charge);
  // Repeating the release (a retried revoke) moves nothing more.
  t.is((await adminAs(gw, e.owner, 'POST', `/agent-keys/${id}/revoke`)).status, 409);
  t.is(await gw.deps.agents.keys.settleEscrow(id), CAP_NANO - charge);
  const b = await books(e.id, id);
  t.is(b.escrow, 0);
  t.is(b.enterprise, start - charge);
});

test.serial('calls that overshot the escrow (charges are not gated) leave it at 0: the enterprise pays the overshoot', async (t) => {
  const { e, id, start } = await escrowKey();
  const esc = `esc_${id}`;
  const flight = await gw.deps.agents.keys.beginCall(esc, 'req_big_call');
  const charge = CAP_NANO + 5_000;
  await gw.deps.wallet.applyAhead({ opId: 'req_big_call:charge', accountId: esc, keyId: 'k', kind: 'charge', amountNano: -charge, keySpendNano: charge, ref: 'req_big_call' });
  await flight!.leave();
  const revoked = await adminAs(gw, e.owner, 'POST', `/agent-keys/${id}/revoke`);
  t.is(revoked.body.released_usd, '-0.000005');
  const b = await books(e.id, id);
  t.is(b.escrow, 0, 'never below 0 once released');
  t.is(b.enterprise, start - charge);
});
