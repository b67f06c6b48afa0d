import type { AccountDoc, AccountModels, MembershipDoc, UserDoc } from '../accounts/store';
import { knowledgeRedisKeys, type KnowledgeModels, type KbDoc } from './store';
import type { RedisClient } from '../../platform/redis';
import { DEFAULT_KB_ID } from '../../domain/knowledge/page';
import type { BaseRef } from './page-store';

/**
 * Which knowledge bases a caller may read (spec 3 section 1.2): the personal
 * base `default` of the key's account, plus every team base of an enterprise
 * that the account's user belongs to and that names that user among its
 * readers (or is open to all members). A key of an enterprise account itself
 * reads every base of that enterprise. Team bases have ids unique across the
 * platform, so a `kb_id` names one base within any caller's scope.
 *
 * Every change that can alter a scope (a membership added, changed or
 * removed; a team base created, deleted or given other readers) bumps one
 * version in Redis (`changed()`); a cache of scopes keyed on that version
 * (agent calls) sees the change on its very next call, on every instance.
 */
export const SCOPE_VERSION_KEY = knowledgeRedisKeys.scopeVersion;

/** How long a scope read for a key's account is reused while the scope version is unchanged (REST reads: one Redis GET instead of 1-3 store queries). */
const ACCOUNT_SCOPE_CACHE_MS = 1000;

export class KnowledgeScope {
  private readonly accountScopes = new Map<string, { at: number; version: string | null; refs: BaseRef[] }>();

  constructor(private readonly db: AccountModels & KnowledgeModels, private readonly redis: RedisClient, private readonly cacheMs = ACCOUNT_SCOPE_CACHE_MS) {}

  /** Call after a change of membership or of a team base's existence or readers. */
  async changed(): Promise<void> {
    await this.redis.incr(SCOPE_VERSION_KEY);
  }

  /**
   * Bases readable by a key of this account. Reused for up to `cacheMs` while the scope version in Redis is
   * unchanged (every change of membership, team base or readers bumps it: `changed()`), as agent calls do
   * (capabilities/agents/agents.ts): a change reaches the next read on every instance.
   */
  async forAccount(accountId: string): Promise<BaseRef[]> {
    if (this.cacheMs <= 0) return this.readAccount(accountId);
    const version = await this.redis.get(SCOPE_VERSION_KEY);
    const now = performance.now();
    const hit = this.accountScopes.get(accountId);
    if (hit && hit.version === version && now - hit.at < this.cacheMs) return hit.refs.slice();
    const refs = await this.readAccount(accountId);
    if (this.accountScopes.size >= 10_000) this.accountScopes.clear();
    this.accountScopes.set(accountId, { at: now, version, refs: refs.slice() });
    return refs;
  }

  private async readAccount(accountId: string): Promise<BaseRef[]> {
    const account = await this.db.Account.findById(accountId).select({ enterprise: 1, owner_user_id: 1 }).lean<Pick<AccountDoc, 'enterprise' | 'owner_user_id'>>();
    if (!account) return [];
    const personal: BaseRef = { account_id: accountId, kb_id: DEFAULT_KB_ID };
    if (account.enterprise) {
      const own = await this.db.Kb.find({ account_id: accountId, deleted_at: null, kb_id: { $ne: DEFAULT_KB_ID } }).select({ account_id: 1, kb_id: 1 }).lean<KbDoc[]>();
      return [personal, ...own.map((b) => ({ account_id: b.account_id, kb_id: b.kb_id }))];
    }
    const teams = account.owner_user_id ? await this.teamBasesOf(account.owner_user_id) : [];
    return [personal, ...teams];
  }

  /** Bases readable by a user: their personal base and the team bases open to them. */
  async forUser(userId: string): Promise<BaseRef[]> {
    const user = await this.db.User.findById(userId).select({ personal_account_id: 1 }).lean<Pick<UserDoc, 'personal_account_id'>>();
    if (!user) return [];
    return [{ account_id: user.personal_account_id, kb_id: DEFAULT_KB_ID }, ...(await this.teamBasesOf(userId))];
  }

  /**
   * Bases an enterprise agent may search (spec 3 section 5: "scope bound to the agent creator's
   * visibility"), never outside its enterprise: an agent's callers may be anonymous and may make it repeat
   * what it reads, so a person's own base or another enterprise's never reaches them. The operator's agent
   * (no creator) reads what the enterprise's keys read; a person's agent reads the enterprise's own base
   * and the team bases of that enterprise open to them, while they belong to it.
   */
  async forAgent(enterpriseId: string, creatorUserId: string | null): Promise<BaseRef[]> {
    if (!creatorUserId) return this.readAccount(enterpriseId);
    const member = await this.db.Membership.exists({ user_id: creatorUserId, enterprise_id: enterpriseId });
    if (!member) return [];
    const teams = (await this.teamBasesOf(creatorUserId)).filter((b) => b.account_id === enterpriseId);
    return [{ account_id: enterpriseId, kb_id: DEFAULT_KB_ID }, ...teams];
  }

  /** The readable base with this id, or null (unreadable and missing look the same). */
  async resolve(scope: BaseRef[], kbId: string): Promise<BaseRef | null> {
    return scope.find((b) => b.kb_id === kbId) ?? null;
  }

  private async teamBasesOf(userId: string): Promise<BaseRef[]> {
    const memberships = await this.db.Membership.find({ user_id: userId }).select({ enterprise_id: 1 }).lean<MembershipDoc[]>();
    if (memberships.length === 0) return [];
    const bases = await this.db.Kb.find({
      account_id: { $in: memberships.map((m) => m.enterprise_id) },
      kind: 'team',
      deleted_at: null,
    }).lean<KbDoc[]>();
    return bases
      .filter((b) => b.readers === 'all' || (Array.isArray(b.readers) && b.readers.includes(userId)))
      .map((b) => ({ account_id: b.account_id, kb_id: b.kb_id }));
  }
}
