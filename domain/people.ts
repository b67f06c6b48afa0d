/**
 * People: a user signs in (console) and owns one personal account (wallet,
 * keys, personal knowledge base `default`). An enterprise is an account too
 * (its wallet is the pool) whose members are users with a role.
 */
export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

/** Owners and admins manage an enterprise (agents, key approvals, team bases). */
export function canAdminister(role: Role | null | undefined): boolean {
  return role === 'owner' || role === 'admin';
}

export interface UserRecord {
  id: string;
  email: string;
  name: string;
  personal_account_id: string;
  disabled: boolean;
  created_at: number;
}

export interface MembershipRecord {
  enterprise_id: string;
  user_id: string;
  role: Role;
}
