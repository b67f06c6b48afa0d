import type { AgentRecord } from '../../domain/agents';
import type { Actor, Origin } from './actor';
import type { AgentServices } from './index';

/**
 * Delete an agent for good: every issued key of it is revoked first (each with
 * its own audit row, escrow rests returned as a revocation does), pending
 * requests are rejected, then the agent is marked deleted. The audit record
 * stays: nothing here removes an entry. The console and the management API
 * both delete through this.
 */
export async function deleteAgent(agents: Pick<AgentServices, 'service' | 'keys'>, actor: Actor, agentId: string, origin: Origin): Promise<{ agent: AgentRecord; revoked: number }> {
  const agent = await agents.service.get(actor, agentId);
  const keys = await agents.keys.listForEnterprise(actor, agent.enterprise_id, { agentId: agent.id });
  let revoked = 0;
  for (const k of keys) {
    if (k.state === 'issued') {
      await agents.keys.revoke(actor, k._id, origin);
      revoked++;
    } else if (k.state === 'requested') {
      await agents.keys.reject(actor, k._id, { reason: 'the agent was deleted' }, origin);
    }
  }
  return { agent: await agents.service.remove(actor, agent.id), revoked };
}
