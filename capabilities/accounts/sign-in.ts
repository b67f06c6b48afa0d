import { createHash } from 'node:crypto';
import type { RedisClient } from '../../platform/redis';
import { safeEqual } from '../../platform/secrets';
import { GatewayError } from '../../domain/errors';
import type { PeopleService } from './people';
import type { Principal } from './account-access';

/** Failed attempts allowed per email from one client address in one window. */
export const SIGN_IN_MAX_FAILURES = 10;
/** ... per client address (many people may share one), and per email from every address together. */
export const SIGN_IN_MAX_FAILURES_PER_ADDRESS = 100;
export const SIGN_IN_WINDOW_S = 15 * 60;

/**
 * Console sign-in: a user's email and password (scrypt), or the operator's
 * admin token. Failures are counted in Redis per email and client address
 * (10), per client address (100) and per email from all addresses (100); past
 * a limit every attempt it covers is refused with 429 until the window ends,
 * whether or not the password is right. So one address guessing a person's
 * password is stopped after 10 tries without locking that person out
 * everywhere (a lock on the email alone let anyone lock any user out with 10
 * requests), and guesses spread over many addresses stop at 100.
 */
export class SignInService {
  constructor(private readonly redis: RedisClient, private readonly people: PeopleService, private readonly adminToken: string) {}

  async withPassword(email: string, password: string, clientIp: string): Promise<Principal> {
    const who = email.trim().toLowerCase();
    const counters = [this.counter('email-ip', `${who}\n${clientIp}`), this.counter('email', who), this.counter('ip', clientIp)];
    await this.refuseIfLimited(counters);
    const user = email && password ? await this.people.checkPassword(email, password) : null;
    if (!user) {
      await this.fail(counters);
      throw new GatewayError('invalid_api_key', 'wrong email or password', { status: 401, param: 'password' });
    }
    return { kind: 'user', userId: user._id };
  }

  async withAdminToken(token: string, clientIp: string): Promise<Principal> {
    const counters = [this.counter('ip', clientIp), this.counter('operator', clientIp)];
    await this.refuseIfLimited(counters);
    if (!token || !safeEqual(token, this.adminToken)) {
      await this.fail(counters);
      throw new GatewayError('invalid_api_key', 'wrong admin token', { status: 401, param: 'token' });
    }
    return { kind: 'operator' };
  }

  private counter(kind: string, value: string): string {
    return `console:signin-fail:${kind}:${createHash('sha256').update(value).digest('hex').slice(0, 32)}`;
  }

  private async refuseIfLimited(keys: string[]): Promise<void> {
    // One GET per counter (auto-pipelined), not an MGET: the counters are in different hash slots on a Redis Cluster.
    const counts = await Promise.all(keys.map((k) => this.redis.get(k)));
    const limitOf = (k: string) => (k.includes(':ip:') || k.includes(':email:') ? SIGN_IN_MAX_FAILURES_PER_ADDRESS : SIGN_IN_MAX_FAILURES);
    if (counts.some((c, i) => Number(c ?? 0) >= limitOf(keys[i]))) {
      const ttl = Math.max(1, ...(await Promise.all(keys.map((k) => this.redis.ttl(k)))));
      throw new GatewayError('rate_limit_exceeded', `too many failed sign-in attempts; try again in ${Math.ceil(ttl / 60)} min`, {
        headers: { 'retry-after': String(ttl) },
      });
    }
  }

  private async fail(keys: string[]): Promise<void> {
    // One MULTI per counter: a transaction may touch one hash slot only on a Redis Cluster.
    await Promise.all(keys.map((k) => this.redis.multi().incr(k).expire(k, SIGN_IN_WINDOW_S, 'NX').exec()));
  }
}
