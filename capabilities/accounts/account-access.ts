import type { AccountDoc, AccountModels } from './store';
import { canAdminister, type Role } from '../../domain/people';
import type { PeopleService } from './people';

/** Who is acting: a signed-in user, or the operator (admin token), who sees every account. */
export type Principal = { kind: 'operator' } | { kind: 'user'; userId: string };

export interface ManagedAccount {
  id: string;
  name: string;
  enterprise: boolean;
  /** `personal` for the user's own account; the membership role for an enterprise. */
  role: 'personal' | Role | 'operator';
}

/**
 * Which accounts a person manages: a user manages their personal account and
 * the enterprises where they are owner or admin; the operator manages every
 * account. Anything outside that answers 404, exactly like an unknown id.
 */
export class AccountAccess {
  constructor(private readonly db: AccountModels, private readonly people: PeopleService) {}

  async managed(p: Principal, opts: { limit?: number } = {}): Promise<ManagedAccount[]> {
    if (p.kind === 'operator') {
      const docs = await this.db.Account.find({}).sort({ created_at: -1 }).limit(opts.limit ?? 200).lean<AccountDoc[]>();
      return docs.map((d) => ({ id: d._id, name: d.name, enterprise: d.enterprise, role: 'operator' as const }));
    }
    const user = await this.people.getUser(p.userId);
    const out: ManagedAccount[] = [];
    const personal = await this.db.Account.findById(user.personal_account_id).lean<AccountDoc>();
    if (personal) out.push({ id: personal._id, name: personal.name, enterprise: false, role: 'personal' });
    for (const m of await this.people.membershipsOf(p.userId)) {
      if (!canAdminister(m.role)) continue;
      const e = await this.db.Account.findById(m.enterprise_id).lean<AccountDoc>();
      if (e) out.push({ id: e._id, name: e.name, enterprise: true, role: m.role });
    }
    return out;
  }

  /**
   * The account a console session acts on: the one it chose while the principal manages it, else
   * the first of `managed` (none: null). The operator's `managed` is only the newest accounts, so an
   * older one it chose is read by id, never replaced by the newest (a top-up must land where it was asked).
   */
  async sessionAccount(p: Principal, chosen: string | null | undefined, managed: ManagedAccount[]): Promise<ManagedAccount | null> {
    const listed = chosen ? managed.find((a) => a.id === chosen) : undefined;
    if (listed) return listed;
    if (chosen && p.kind === 'operator') {
      const doc = await this.db.Account.findById(chosen).lean<AccountDoc>();
      if (doc) return { id: doc._id, name: doc.name, enterprise: doc.enterprise, role: 'operator' };
    }
    return managed[0] ?? null;
  }

  async canManage(p: Principal, accountId: string): Promise<boolean> {
    if (p.kind === 'operator') return (await this.db.Account.exists({ _id: accountId })) !== null;
    return (await this.managed(p)).some((a) => a.id === accountId);
  }
}
