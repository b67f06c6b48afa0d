import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../platform/redis';
import { sha256Hex } from '../../platform/secrets';
import type { Principal } from '../../capabilities/accounts/account-access';
import { accountRedisKeys } from '../../capabilities/accounts/store';

export const SESSION_COOKIE = 'mg_console';
/** Idle lifetime; every request of the session extends it. */
export const SESSION_IDLE_S = 12 * 3600;
/** How long a one-time mark waits for the page it was made for (the GET after a POST's redirect). */
export const ONCE_TTL_S = 5 * 60;

export interface Session {
  principal: Principal;
  /** Synchroniser token: every state-changing request must carry it. */
  csrf: string;
  /** The account the pages show (one the principal manages). */
  accountId: string | null;
  createdAt: number;
}

/**
 * Console sessions, kept server-side in Redis under the sha256 of the cookie
 * value (a leaked Redis dump holds no usable cookie). Signing out deletes it.
 */
export class SessionStore {
  constructor(private readonly redis: RedisClient) {}

  private key(token: string): string {
    return accountRedisKeys.consoleSession(sha256Hex(token));
  }

  async create(principal: Principal, accountId: string | null): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString('base64url');
    const session: Session = { principal, csrf: randomBytes(32).toString('base64url'), accountId, createdAt: Date.now() };
    await this.redis.set(this.key(token), JSON.stringify(session), 'EX', SESSION_IDLE_S);
    return { token, session };
  }

  async get(token: string | undefined): Promise<Session | null> {
    if (!token || token.length > 100) return null;
    const k = this.key(token);
    const v = await this.redis.get(k);
    if (!v) return null;
    await this.redis.expire(k, SESSION_IDLE_S);
    return JSON.parse(v) as Session;
  }

  async save(token: string, session: Session): Promise<void> {
    await this.redis.set(this.key(token), JSON.stringify(session), 'EX', SESSION_IDLE_S);
  }

  /**
   * A one-time mark of this session (`what`: "key:<id>", a key to show once after the redirect that follows its
   * creation or reveal): the first `takeOnce` finds it and removes it; a reload, or another session, finds nothing.
   * The mark holds no secret.
   */
  async markOnce(token: string, what: string): Promise<void> {
    await this.redis.set(`${this.key(token)}:once:${what}`, '1', 'EX', ONCE_TTL_S);
  }

  async takeOnce(token: string | undefined, what: string): Promise<boolean> {
    return !!token && (await this.redis.del(`${this.key(token)}:once:${what}`)) === 1;
  }

  async destroy(token: string | undefined): Promise<void> {
    if (token) await this.redis.del(this.key(token));
  }
}
