import type { AccountModels, MembershipDoc, UserDoc } from './store';
import { isDuplicateKey } from '../../platform/mongo';
import { hashPassword, verifyPassword } from './passwords';
import { newId } from '../../platform/ids';
import { GatewayError, errors } from '../../domain/errors';
import type { MembershipRecord, Role, UserRecord } from '../../domain/people';
import type { AccountService } from './accounts';

export function toUserRecord(doc: UserDoc): UserRecord {
  return {
    id: doc._id,
    email: doc.email,
    name: doc.name,
    personal_account_id: doc.personal_account_id,
    disabled: doc.disabled,
    created_at: Math.floor(doc.created_at.getTime() / 1000),
  };
}

function toMembership(doc: MembershipDoc): MembershipRecord {
  return { enterprise_id: doc.enterprise_id, user_id: doc.user_id, role: doc.role };
}


/**
 * Users and enterprise membership: the smallest model the knowledge bases,
 * agents and the console need. A user owns one personal account (made with
 * the user, with its signup grant); an enterprise account has members, each
 * with one role (owner, admin or member).
 */
export class PeopleService {
  /** `membershipChanged`: told after a membership is added, changed or removed (knowledge scopes depend on them). */
  constructor(private readonly db: AccountModels, private readonly accounts: AccountService, private readonly membershipChanged: () => Promise<void> = async () => {}) {}

  async createUser(input: { email: string; name: string; password?: string }): Promise<UserDoc> {
    const email = input.email.trim().toLowerCase();
    if (await this.db.User.exists({ email })) {
      throw new GatewayError('invalid_request', `a user with email ${email} exists`, { status: 409, param: 'email' });
    }
    const id = newId('user');
    const account = await this.accounts.create({ name: input.name, ownerUserId: id });
    const doc: UserDoc = {
      _id: id,
      email,
      name: input.name,
      password_hash: input.password ? await hashPassword(input.password) : null,
      personal_account_id: account._id,
      disabled: false,
      created_at: new Date(),
    };
    try {
      await this.db.User.create(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw new GatewayError('invalid_request', `a user with email ${email} exists`, { status: 409, param: 'email' });
      throw err;
    }
    return doc;
  }

  async getUser(id: string): Promise<UserDoc> {
    const doc = await this.db.User.findById(id).lean<UserDoc>();
    if (!doc) throw errors.notFound(`no user ${id}`);
    return doc;
  }

  /** How each of these users is shown to people (email, or the id of a user since removed), in one query. */
  async labelsOf(ids: Iterable<string | null | undefined>): Promise<Map<string, string>> {
    const wanted = [...new Set([...ids].filter((id): id is string => !!id))];
    const labels = new Map(wanted.map((id) => [id, id]));
    if (wanted.length === 0) return labels;
    const docs = await this.db.User.find({ _id: { $in: wanted } }, { _id: 1, email: 1 }).lean<Array<{ _id: string; email: string }>>();
    for (const d of docs) labels.set(d._id, d.email);
    return labels;
  }

  async findByEmail(email: string): Promise<UserDoc | null> {
    return this.db.User.findOne({ email: email.trim().toLowerCase() }).lean<UserDoc>();
  }

  /** The user whose personal account this is, if any. */
  async ownerOf(accountId: string): Promise<UserDoc | null> {
    return this.db.User.findOne({ personal_account_id: accountId }).lean<UserDoc>();
  }

  async setPassword(userId: string, password: string): Promise<void> {
    await this.getUser(userId);
    await this.db.User.updateOne({ _id: userId }, { $set: { password_hash: await hashPassword(password) } });
  }

  /** The user for these credentials, or null (unknown email, wrong password, disabled). */
  async checkPassword(email: string, password: string): Promise<UserDoc | null> {
    const user = await this.findByEmail(email);
    const ok = await verifyPassword(password, user?.password_hash ?? null);
    return ok && user && !user.disabled ? user : null;
  }

  async setDisabled(userId: string, disabled: boolean): Promise<UserDoc> {
    await this.getUser(userId);
    await this.db.User.updateOne({ _id: userId }, { $set: { disabled } });
    return this.getUser(userId);
  }

  /** Add a member, or change the role of an existing one. */
  async setMember(enterpriseId: string, userId: string, role: Role): Promise<MembershipRecord> {
    const enterprise = await this.accounts.get(enterpriseId);
    if (!enterprise.enterprise) throw new GatewayError('invalid_request', `${enterpriseId} is not an enterprise account`);
    await this.getUser(userId);
    const doc: MembershipDoc = { _id: `${enterpriseId}:${userId}`, enterprise_id: enterpriseId, user_id: userId, role, created_at: new Date() };
    try {
      await this.db.Membership.create(doc);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await this.db.Membership.updateOne({ _id: doc._id }, { $set: { role } });
    }
    await this.membershipChanged();
    return toMembership(doc);
  }

  async removeMember(enterpriseId: string, userId: string): Promise<void> {
    const r = await this.db.Membership.deleteOne({ _id: `${enterpriseId}:${userId}` });
    if (r.deletedCount === 0) throw errors.notFound(`no member ${userId} of ${enterpriseId}`);
    await this.membershipChanged();
  }

  async roleIn(enterpriseId: string, userId: string): Promise<Role | null> {
    const doc = await this.db.Membership.findById(`${enterpriseId}:${userId}`).lean<MembershipDoc>();
    return doc?.role ?? null;
  }

  async membershipsOf(userId: string): Promise<MembershipRecord[]> {
    const docs = await this.db.Membership.find({ user_id: userId }).lean<MembershipDoc[]>();
    return docs.map(toMembership);
  }

  async membersOf(enterpriseId: string): Promise<MembershipRecord[]> {
    const docs = await this.db.Membership.find({ enterprise_id: enterpriseId }).sort({ created_at: 1 }).lean<MembershipDoc[]>();
    return docs.map(toMembership);
  }
}
