import { AUTH_MESSAGES, GatewayError, errors } from '../../domain/errors';
import type { Logger } from '../../platform/logger';
import type { RedisClient } from '../../platform/redis';
import { withLock } from '../../platform/lock';
import { newId } from '../../platform/ids';
import { canAdminister } from '../../domain/people';
import { nextState, type AgentKeyAction } from '../../domain/agents';
import { isDuplicateKey } from '../../platform/mongo';
import type { ApiKeyDoc } from '../accounts/store';
import { agentRedisKeys, type AgentModels, type AgentKeyClaimDoc, type AgentKeyDoc } from './store';
import type { KeyService } from '../accounts/keys';
import type { PeopleService } from '../accounts/people';
import type { AgentService } from './agents';
import type { AgentAudit } from './audit';
import { Escrow, agentKeyOfEscrow, escrowWalletId } from './escrow';
import { actorId, forbidden, type Actor, type AgentPermissions, type Origin } from './actor';

/** How long a revocation waits for the calls in flight on an escrow before answering with the release pending. */
const REVOKE_WAIT_MS = 2_000;
const conflict = (message: string) => new GatewayError('invalid_request', message, { status: 409 });

/**
 * Decisions on one agent key (approve, reject, revoke, delete) wait this long for each other: they run one at a
 * time under a Redis lock, each on the key as the previous one left it (longer than a revocation's escrow wait).
 */
const DECISION_LOCK_WAIT_MS = 15_000;

/** The ApiKey of an agent key has a deterministic id, so resuming an issuance finds the key it made. */
const apiKeyIdOf = (agentKeyId: string) => `key_${agentKeyId.replace(/^akey_/, '')}`;

export interface IssueInput {
  name: string;
  /** Whose key list shows it (default: the issuing user). */
  holder_user_id?: string | null;
  spend_cap_nano?: number | null;
  expires_at?: Date | null;
}

/**
 * Agent keys and their lifecycle (spec 3 section 3): a member requests a key
 * for a published agent (`requested`); an owner or admin approves it with a
 * mandatory spend cap (`issued`) or rejects it; an owner or admin may also
 * issue directly (cap optional, plaintext shown once and later viewable);
 * revoking or deleting is final and applies to the next request on every
 * instance (the key record in Redis is what each instance reads). Each step
 * that must happen once is claimed by a unique insert; each is audited.
 */
export class AgentKeyService {
  private readonly escrow: Escrow;

  constructor(
    private readonly adb: AgentModels,
    private readonly keys: KeyService,
    private readonly people: PeopleService,
    private readonly agents: AgentService,
    private readonly audit: AgentAudit,
    private readonly perms: AgentPermissions,
    escrow: Escrow,
    private readonly log?: Logger,
    private readonly redis?: RedisClient,
  ) {
    this.escrow = escrow;
  }

  /**
   * One decision at a time per agent key: FerretDB's conditional updates are not atomic, and a claim
   * (unique insert) alone lets every concurrent caller of the same decision resume the winner's (each then
   * answering 200 and writing an audit row). Under the lock each caller reads the key as the previous
   * decision left it: the first decides, the rest find it decided and get 409; a claim left by a crash
   * (the key still undecided) is still resumed by the next caller.
   */
  private oneAtATime<T>(agentKeyId: string, fn: () => Promise<T>): Promise<T> {
    if (!this.redis) return fn();
    const busy = () => new GatewayError('internal_error', `agent key ${agentKeyId} is being changed by another request; retry`, { headers: { 'retry-after': '1' } });
    return withLock(this.redis, agentRedisKeys.keyDecisionLock(agentKeyId), { waitMs: DECISION_LOCK_WAIT_MS, busy }, fn);
  }

  /** A member asks for a key to a published agent of their enterprise. */
  async request(actor: Actor, agentId: string, input: { name: string; note?: string | null }, origin: Origin): Promise<AgentKeyDoc> {
    if (actor.kind !== 'user') throw new GatewayError('invalid_request', 'a key request is made by a user: send X-Acting-User');
    const agent = await this.agents.doc(agentId);
    await this.perms.roleOf(actor, agent.enterprise_id);
    if (!agent.published) throw forbidden(`agent ${agentId} is not published`);
    const doc = this.newDoc(agent.enterprise_id, agentId, input.name, actor.userId, actor.userId);
    doc.note = input.note ?? null;
    await this.adb.AgentKey.create(doc);
    await this.audit.append({ enterpriseId: doc.enterprise_id, agentKeyId: doc._id, agentId, action: 'request', actor, origin, detail: { name: doc.name } });
    return doc;
  }

  /** An owner or admin issues a key directly: the answer carries the plaintext (shown once; later views are audited). */
  async issue(actor: Actor, agentId: string, input: IssueInput, origin: Origin): Promise<{ doc: AgentKeyDoc; plaintext: string }> {
    const agent = await this.agents.doc(agentId);
    await this.perms.requireAdmin(actor, agent.enterprise_id);
    if (!agent.published) throw forbidden(`agent ${agentId} is not published: publish it before issuing keys`);
    await this.agents.assertKeyable(agent);
    const holder = input.holder_user_id ?? actorId(actor);
    if (holder && !(await this.people.roleIn(agent.enterprise_id, holder))) {
      throw new GatewayError('invalid_request', `user ${holder} is not a member of ${agent.enterprise_id}`, { param: 'holder_user_id' });
    }
    const doc = this.newDoc(agent.enterprise_id, agentId, input.name, holder, null);
    doc.expires_at = input.expires_at ?? null;
    await this.adb.AgentKey.create(doc);
    let decided: { doc: AgentKeyDoc; plaintext?: string };
    try {
      decided = await this.decide(actor, doc, 'approve', { capNano: input.spend_cap_nano ?? null });
    } catch (err) {
      // Refused before anything was held or issued (escrow short, cap missing): the key never existed.
      if (err instanceof GatewayError && err.status < 500) await this.adb.AgentKey.deleteOne({ _id: doc._id, state: 'requested' });
      throw err;
    }
    const { doc: issued, plaintext } = decided;
    await this.audit.append({
      enterpriseId: doc.enterprise_id, agentKeyId: doc._id, agentId, action: 'issue', actor, origin,
      detail: { name: doc.name, holder_user_id: holder, spend_cap_nano: issued.spend_cap_nano, billing: issued.billing, plaintext_shown: true },
    });
    return { doc: issued, plaintext: plaintext! };
  }

  /**
   * 404 for an unknown key, 403 unless the actor administers its enterprise: what a decision (approve, reject)
   * checks before it reads its input, so a member learns nothing of the input's rules.
   */
  async requireManager(actor: Actor, agentKeyId: string): Promise<void> {
    await this.managed(actor, agentKeyId);
  }

  /** Approve a request: a spend cap is mandatory here. The holder then sees the key in their list. */
  async approve(actor: Actor, agentKeyId: string, input: { spend_cap_nano: number }, origin: Origin): Promise<AgentKeyDoc> {
    await this.managed(actor, agentKeyId); // 404 / 403 before the input's rules, and before queueing for the lock
    if (!(input.spend_cap_nano > 0)) throw new GatewayError('invalid_request', 'approving a requested key needs a spend cap above 0', { param: 'spend_cap_usd' });
    return this.oneAtATime(agentKeyId, () => this.approveLocked(actor, agentKeyId, input, origin));
  }

  private async approveLocked(actor: Actor, agentKeyId: string, input: { spend_cap_nano: number }, origin: Origin): Promise<AgentKeyDoc> {
    const doc = await this.managed(actor, agentKeyId);
    const agent = await this.agents.doc(doc.agent_id).catch(() => null);
    if (!agent?.published) throw forbidden(`agent ${doc.agent_id} is deleted or not published`);
    await this.agents.assertKeyable(agent);
    const { doc: issued } = await this.decide(actor, doc, 'approve', { capNano: input.spend_cap_nano });
    await this.audit.append({
      enterpriseId: doc.enterprise_id, agentKeyId, agentId: doc.agent_id, action: 'approve', actor, origin,
      detail: { spend_cap_nano: issued.spend_cap_nano, billing: issued.billing, holder_user_id: doc.holder_user_id },
    });
    return issued;
  }

  async reject(actor: Actor, agentKeyId: string, input: { reason?: string | null }, origin: Origin): Promise<AgentKeyDoc> {
    await this.managed(actor, agentKeyId);
    return this.oneAtATime(agentKeyId, () => this.rejectLocked(actor, agentKeyId, input, origin));
  }

  private async rejectLocked(actor: Actor, agentKeyId: string, input: { reason?: string | null }, origin: Origin): Promise<AgentKeyDoc> {
    const doc = await this.managed(actor, agentKeyId);
    const { doc: rejected } = await this.decide(actor, doc, 'reject', { reason: input.reason ?? null });
    await this.audit.append({ enterpriseId: doc.enterprise_id, agentKeyId, agentId: doc.agent_id, action: 'reject', actor, origin, detail: { reason: input.reason ?? null } });
    return rejected;
  }

  /**
   * Revoke (or delete) an issued key: refused from the very next request on every instance, never
   * restorable; an escrow's rest goes back to the enterprise once the calls in flight on it have settled
   * (at once when none is; else by the call that settles last, `released_nano` null until then).
   * Deleting a revoked key only hides it; revoking a revoked escrow key whose release is still pending
   * completes the release.
   */
  async revoke(actor: Actor, agentKeyId: string, origin: Origin, opts: { delete?: boolean } = {}): Promise<AgentKeyDoc> {
    await this.managed(actor, agentKeyId);
    return this.oneAtATime(agentKeyId, () => this.revokeLocked(actor, agentKeyId, origin, opts));
  }

  private async revokeLocked(actor: Actor, agentKeyId: string, origin: Origin, opts: { delete?: boolean }): Promise<AgentKeyDoc> {
    const doc = await this.managed(actor, agentKeyId);
    const action = opts.delete ? 'delete' : 'revoke';
    if (doc.deleted_at) throw conflict(`agent key ${agentKeyId} is deleted`);
    let ending = false;
    if (doc.state === 'requested' || doc.state === 'rejected') {
      if (!opts.delete) throw conflict(`agent key ${agentKeyId} is ${doc.state}, not issued: reject a request instead`);
    } else if (doc.state === 'revoked') {
      if (!opts.delete) {
        if (doc.billing === 'escrow' && doc.released_nano === null) return { ...doc, released_nano: await this.settleEscrow(agentKeyId) };
        throw conflict(`agent key ${agentKeyId} is already revoked`);
      }
    } else {
      const claim = await this.claim(`${agentKeyId}:end`, 'revoke', actor, {});
      doc.state = 'revoked';
      doc.revoked_by = claim.by;
      doc.revoked_at = claim.created_at;
      ending = true;
      // The key stops working first (the next request on every instance reads it disabled).
      if (doc.api_key_id) await this.keys.update(doc.api_key_id, { enabled: false }, { lifecycle: true });
    }
    if (opts.delete) {
      doc.deleted_at = new Date();
      if (doc.api_key_id) await this.keys.remove(doc.api_key_id, { lifecycle: true });
    }
    // Only the fields this step changes: a release finishing meanwhile sets released_nano itself.
    await this.adb.AgentKey.updateOne(
      { _id: agentKeyId },
      { $set: { state: doc.state, revoked_by: doc.revoked_by, revoked_at: doc.revoked_at, deleted_at: doc.deleted_at } },
    );
    if (ending && doc.billing === 'escrow') doc.released_nano = await this.settleEscrow(agentKeyId, { waitMs: REVOKE_WAIT_MS });
    await this.audit.append({
      enterpriseId: doc.enterprise_id, agentKeyId, agentId: doc.agent_id, action, actor, origin,
      detail: { state: doc.state, released_nano: doc.released_nano, ...(ending && doc.billing === 'escrow' && doc.released_nano === null ? { release: 'pending' } : {}) },
    });
    return doc;
  }

  /**
   * Return a revoked key's escrow rest to the enterprise once no call is in flight on it: closes the
   * escrow to new calls, and when none is left (waiting up to `waitMs` for them), measures the rest
   * once (the claim fixes it), moves it and records it. Idempotent: whoever runs it (the revocation,
   * the call that settles last, a retry) moves the same amount once. Null while calls are in flight;
   * then it runs again when the last one leaves or its deadline passes.
   */
  async settleEscrow(agentKeyId: string, opts: { waitMs?: number } = {}): Promise<number | null> {
    const doc = await this.adb.AgentKey.findById(agentKeyId).lean<AgentKeyDoc>();
    if (!doc || doc.billing !== 'escrow' || doc.state !== 'revoked') return null;
    const walletId = escrowWalletId(agentKeyId);
    const until = Date.now() + (opts.waitMs ?? 0);
    let inFlight = await this.escrow.flights.close(walletId);
    while (inFlight > 0 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
      inFlight = await this.escrow.flights.close(walletId);
    }
    if (inFlight > 0) {
      this.retryEscrowLater(agentKeyId);
      return null;
    }
    const amount = await this.releaseAmount(agentKeyId, null);
    await this.escrow.release(doc.enterprise_id, agentKeyId, amount);
    if (doc.released_nano !== amount) await this.adb.AgentKey.updateOne({ _id: agentKeyId }, { $set: { released_nano: amount } });
    return amount;
  }

  /**
   * A call on an agent key enters its escrow's flights before anything else (a key billed to the
   * enterprise wallet needs none): refused once the escrow is closed. The answer's `leave` runs once
   * the call's charge is written; the call that leaves a closed escrow last releases its rest.
   */
  async beginCall(walletId: string, requestId: string): Promise<{ leave(): Promise<void> } | null> {
    const agentKeyId = agentKeyOfEscrow(walletId);
    if (!agentKeyId) return null;
    if (!(await this.escrow.flights.enter(walletId, requestId))) throw errors.auth(AUTH_MESSAGES.revoked);
    return {
      leave: async () => {
        if (await this.escrow.flights.leave(walletId, requestId)) await this.settleEscrow(agentKeyId);
      },
    };
  }

  /** A flight that never leaves (its gateway died) lapses at its deadline: try again then, in this process. */
  private retryEscrowLater(agentKeyId: string): void {
    if (this.pendingReleases.has(agentKeyId)) return;
    this.pendingReleases.add(agentKeyId);
    setTimeout(() => {
      this.pendingReleases.delete(agentKeyId);
      this.settleEscrow(agentKeyId).catch((err: unknown) => this.log?.warn('escrow release retry failed; the next revoke call or settled call retries it', { agentKeyId, err }));
    }, this.escrow.flights.leaseMs + 1_000).unref();
  }

  private readonly pendingReleases = new Set<string>();

  /** The plaintext of an issued key, for an owner or admin of its enterprise or its holder; every view is audited. */
  async viewPlaintext(actor: Actor, agentKeyId: string, origin: Origin): Promise<{ doc: AgentKeyDoc; plaintext: string }> {
    const doc = await this.visible(actor, agentKeyId);
    if (doc.state !== 'issued' || !doc.api_key_id) throw conflict(`agent key ${agentKeyId} is ${doc.state}: only an issued key can be viewed`);
    const plaintext = await this.keys.reveal(doc.api_key_id, { lifecycle: true });
    await this.audit.append({ enterpriseId: doc.enterprise_id, agentKeyId, agentId: doc.agent_id, action: 'view_plaintext', actor, origin });
    return { doc, plaintext };
  }

  /**
   * The plaintext of an issued key for the page that shows a view or an issue already recorded (the console's
   * redirect after its POST, behind a one-time mark): the same permission check as `viewPlaintext`, no second
   * audit line.
   */
  async plaintextOfRecordedView(actor: Actor, agentKeyId: string): Promise<string> {
    const doc = await this.visible(actor, agentKeyId);
    if (doc.state !== 'issued' || !doc.api_key_id) throw conflict(`agent key ${agentKeyId} is ${doc.state}: only an issued key can be viewed`);
    return this.keys.reveal(doc.api_key_id, { lifecycle: true });
  }

  async get(actor: Actor, agentKeyId: string): Promise<AgentKeyDoc> {
    return this.visible(actor, agentKeyId);
  }

  /** Every agent key of an enterprise (owners and admins). */
  async listForEnterprise(actor: Actor, enterpriseId: string, filter: { state?: AgentKeyDoc['state']; agentId?: string } = {}): Promise<AgentKeyDoc[]> {
    await this.perms.requireAdmin(actor, enterpriseId);
    const q: Record<string, unknown> = { enterprise_id: enterpriseId, deleted_at: null };
    if (filter.state) q.state = filter.state;
    if (filter.agentId) q.agent_id = filter.agentId;
    return this.adb.AgentKey.find(q).sort({ created_at: -1, _id: -1 }).lean<AgentKeyDoc[]>();
  }

  /** A user's own agent keys (requested, issued, ...), across enterprises: the user's key list. */
  async listForUser(actor: Actor, userId: string): Promise<AgentKeyDoc[]> {
    if (actor.kind === 'user' && actor.userId !== userId) throw forbidden(`user ${actor.userId} may list only their own keys`);
    await this.people.getUser(userId);
    return this.adb.AgentKey.find({ holder_user_id: userId, deleted_at: null }).sort({ created_at: -1, _id: -1 }).lean<AgentKeyDoc[]>();
  }

  /** What the key's calls may still spend from its escrow (null when billed to the enterprise wallet). */
  async escrowBalance(doc: AgentKeyDoc): Promise<number | null> {
    return doc.billing === 'escrow' && doc.state !== 'requested' && doc.state !== 'rejected' ? this.escrow.balance(doc._id) : null;
  }

  // ---- steps

  private newDoc(enterpriseId: string, agentId: string, name: string, holder: string | null, requestedBy: string | null): AgentKeyDoc {
    return {
      _id: newId('akey'), enterprise_id: enterpriseId, agent_id: agentId, name, state: 'requested', holder_user_id: holder,
      requested_by: requestedBy, note: null, spend_cap_nano: null, billing: 'wallet', escrow_wallet_id: null, api_key_id: null,
      prefix: null, expires_at: null, decided_by: null, decided_at: null, reject_reason: null, revoked_by: null, revoked_at: null,
      released_nano: null, deleted_at: null, created_at: new Date(),
    };
  }

  /** Decide a request once (approve or reject); a retry of the same decision resumes it with the winner's values. */
  private async decide(
    actor: Actor, doc: AgentKeyDoc, action: Extract<AgentKeyAction, 'approve' | 'reject'>, data: { capNano?: number | null; reason?: string | null },
  ): Promise<{ doc: AgentKeyDoc; plaintext?: string }> {
    const to = nextState(doc.state, action);
    if (!to) throw conflict(`agent key ${doc._id} is ${doc.state}: it cannot be ${action === 'approve' ? 'approved' : 'rejected'}`);
    const claimData: Record<string, unknown> = { ...data };
    if (action === 'approve') claimData.billing = (await this.agents.settingsOf(doc.enterprise_id)).key_billing;
    const claim = await this.claim(`${doc._id}:decide`, action, actor, claimData);
    const next: AgentKeyDoc = { ...doc, decided_by: claim.by, decided_at: claim.created_at };
    let plaintext: string | undefined;
    if (action === 'reject') {
      next.state = 'rejected';
      next.reject_reason = (claim.data.reason as string | null) ?? null;
    } else {
      const capNano = (claim.data.capNano as number | null) ?? null;
      const billing = claim.data.billing as AgentKeyDoc['billing'];
      if (billing === 'escrow') {
        if (capNano === null) throw new GatewayError('invalid_request', 'this enterprise reserves an escrow per agent key: a spend cap is required', { param: 'spend_cap_usd' });
        try {
          await this.escrow.fund(doc.enterprise_id, doc._id, capNano);
        } catch (err) {
          // Nothing was held: free the decision so it can be made again once the enterprise has the funds.
          await this.adb.AgentKeyClaim.deleteOne({ _id: `${doc._id}:decide`, outcome: 'approve' });
          throw err;
        }
      }
      const { key, plaintext: pt } = await this.apiKey(next, capNano, billing);
      plaintext = pt;
      Object.assign(next, {
        state: 'issued', spend_cap_nano: capNano, billing, escrow_wallet_id: billing === 'escrow' ? escrowWalletId(doc._id) : null,
        api_key_id: key._id, prefix: key.prefix,
      } satisfies Partial<AgentKeyDoc>);
    }
    await this.adb.AgentKey.replaceOne({ _id: doc._id }, next);
    return { doc: next, plaintext };
  }

  /** The ApiKey of an issued agent key: made once (deterministic id), found again on a resumed issuance. */
  private async apiKey(doc: AgentKeyDoc, capNano: number | null, billing: AgentKeyDoc['billing']): Promise<{ key: ApiKeyDoc; plaintext: string }> {
    const id = apiKeyIdOf(doc._id);
    try {
      const { doc: key, plaintext } = await this.keys.create(doc.enterprise_id, {
        id, name: doc.name, spend_cap_nano: capNano, expires_at: doc.expires_at, agent_id: doc.agent_id,
        wallet_id: billing === 'escrow' ? escrowWalletId(doc._id) : null,
      });
      return { key, plaintext };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const key = await this.keys.get(id);
      return { key, plaintext: await this.keys.reveal(id, { lifecycle: true }) };
    }
  }

  /** Claim a once-only step; the winning claim (ours or an earlier one) is returned, a different outcome is 409. */
  private async claim(id: string, outcome: string, actor: Actor | null, data: Record<string, unknown>): Promise<AgentKeyClaimDoc> {
    const doc: AgentKeyClaimDoc = { _id: id, outcome, by: actor ? actorId(actor) : null, data, created_at: new Date() };
    try {
      await this.adb.AgentKeyClaim.create(doc);
      return doc;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const won = await this.adb.AgentKeyClaim.findById(id).lean<AgentKeyClaimDoc>();
    if (!won) throw conflict(`${id} is being decided: retry`);
    if (won.outcome !== outcome) throw conflict(`agent key ${id.split(':')[0]} was already ${won.outcome === 'approve' ? 'approved' : `${won.outcome}ed`}`);
    return won;
  }

  /** The escrow's rest, measured once no call is in flight on it (so it moves no more); the claim fixes it, so a resumed or concurrent revocation returns the same amount. */
  private async releaseAmount(agentKeyId: string, actor: Actor | null): Promise<number> {
    const measured = await this.escrow.balance(agentKeyId);
    const claim = await this.claim(`${agentKeyId}:release`, 'release', actor, { amountNano: measured });
    return claim.data.amountNano as number;
  }

  private async managed(actor: Actor, agentKeyId: string): Promise<AgentKeyDoc> {
    const doc = await this.adb.AgentKey.findById(agentKeyId).lean<AgentKeyDoc>();
    if (!doc) throw errors.notFound(`no agent key ${agentKeyId}`);
    await this.perms.requireAdmin(actor, doc.enterprise_id);
    return doc;
  }

  /** Owners, admins and the operator see every key of the enterprise; a member sees the keys they hold. */
  private async visible(actor: Actor, agentKeyId: string): Promise<AgentKeyDoc> {
    const doc = await this.adb.AgentKey.findById(agentKeyId).lean<AgentKeyDoc>();
    if (!doc || doc.deleted_at) throw errors.notFound(`no agent key ${agentKeyId}`);
    const role = await this.perms.roleOf(actor, doc.enterprise_id).catch(() => null);
    if (canAdminister(role)) return doc;
    if (actor.kind === 'user' && doc.holder_user_id === actor.userId) return doc;
    throw errors.notFound(`no agent key ${agentKeyId}`);
  }
}
