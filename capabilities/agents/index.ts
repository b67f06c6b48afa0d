import type { MongoConn } from '../../platform/mongo';
import type { UsageModels } from '../usage/store';
import { agentModels } from './store';
import type { RedisClient } from '../../platform/redis';
import type { Catalogue } from '../../domain/catalogue';
import type { AccountService } from '../accounts/accounts';
import type { KeyService } from '../accounts/keys';
import type { PeopleService } from '../accounts/people';
import type { Wallet } from '../accounts/wallet';
import type { UsageRecorder } from '../usage/usage';
import type { KnowledgeScope } from '../knowledge/scope';
import { AgentPermissions } from './actor';
import { AgentService } from './agents';
import { AgentKeyService } from './agent-keys';
import { AgentAudit } from './audit';
import { Escrow } from './escrow';
import { EscrowFlights } from './escrow-flights';
import type { Logger } from '../../platform/logger';
import { AgentUsageReport } from './usage';

/** Enterprise agents and agent keys, as the API routes and the console call them. */
export interface AgentServices {
  service: AgentService;
  keys: AgentKeyService;
  audit: AgentAudit;
  usage: AgentUsageReport;
  permissions: AgentPermissions;
}

/** What the gateway and the console take from this capability. */
export interface AgentsDeps {
  /** Enterprise agents, agent keys and their audit. */
  agents: AgentServices;
}

export function createAgentServices(p: {
  db: MongoConn & UsageModels; redis: RedisClient; accounts: AccountService; keys: KeyService; people: PeopleService; wallet: Wallet;
  usage: UsageRecorder; scope: KnowledgeScope; catalogue: () => Catalogue; scopeCacheMs: number;
  /** How long a call may stay in flight on an escrow (its deadline plus the settlement's retries). */
  flightLeaseMs: number; log?: Logger;
  /** AGENT_DEFAULT_MODEL (the whitelist check at key issuance). */
  defaultModel?: string;
}): AgentServices {
  const adb = agentModels(p.db.conn);
  const permissions = new AgentPermissions(p.people);
  const service = new AgentService(p.db, adb, p.redis, p.accounts, p.scope, permissions, p.catalogue, p.scopeCacheMs, p.defaultModel);
  const audit = new AgentAudit(adb);
  const keys = new AgentKeyService(adb, p.keys, p.people, service, audit, permissions, new Escrow(p.wallet, new EscrowFlights(p.redis, p.flightLeaseMs)), p.log, p.redis);
  return { service, keys, audit, usage: new AgentUsageReport(p.db, p.usage), permissions };
}
