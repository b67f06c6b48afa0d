import { GatewayError } from '../../domain/errors';
import { canAdminister, type Role } from '../../domain/people';
import type { PeopleService } from '../accounts/people';

/**
 * Who performs a management call. The operator API acts as the operator, or
 * on behalf of a named user (`X-Acting-User`); the console passes the
 * signed-in user. Every rule of capabilities/agents/ takes one of these.
 */
export type Actor = { kind: 'operator' } | { kind: 'user'; userId: string };

/** Where a management call came from, for the audit record. */
export interface Origin {
  ip: string | null;
  userAgent: string | null;
}

export const OPERATOR: Actor = { kind: 'operator' };

export const actorId = (a: Actor): string | null => (a.kind === 'user' ? a.userId : null);

export function forbidden(message: string): GatewayError {
  return new GatewayError('permission_denied', message, { status: 403 });
}

/** Roles as capabilities/agents/ sees them: the operator can do what an owner can. */
export class AgentPermissions {
  constructor(private readonly people: PeopleService) {}

  /** The actor's role in the enterprise (`owner` for the operator); 403 when the actor is not a member or is disabled. */
  async roleOf(actor: Actor, enterpriseId: string): Promise<Role> {
    if (actor.kind === 'operator') return 'owner';
    const user = await this.people.getUser(actor.userId).catch(() => null);
    if (!user || user.disabled) throw forbidden(`user ${actor.userId} does not exist or is disabled`);
    const role = await this.people.roleIn(enterpriseId, actor.userId);
    if (!role) throw forbidden(`user ${actor.userId} is not a member of ${enterpriseId}`);
    return role;
  }

  /** Owners and admins manage agents, settings and keys. */
  async requireAdmin(actor: Actor, enterpriseId: string): Promise<Role> {
    const role = await this.roleOf(actor, enterpriseId);
    if (!canAdminister(role)) throw forbidden(`managing agents of ${enterpriseId} needs an owner or admin; user ${actorId(actor)} is a ${role}`);
    return role;
  }
}
