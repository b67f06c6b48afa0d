import { readFileSync } from 'node:fs';
import { agentRedisKeys } from './store';
import { type RedisClient } from '../../platform/redis';

const SCRIPT = readFileSync(new URL('./lua/escrow-flight.lua', import.meta.url), 'utf8');
/** The end marker only has to outlive the calls that authenticated before the revocation (and a resumed release re-closes). */
const END_MARKER_TTL_S = 24 * 3600;

type FlightOp = 'enter' | 'leave' | 'close';
interface WithFlightScript {
  escrowFlight(flights: string, end: string, op: FlightOp, member: string, leaseMs: number, endTtlS: number): Promise<number>;
}

/**
 * The calls in flight on an agent key billed to a reserved escrow, so that
 * the escrow's rest is released only once every call that may still charge it
 * has settled (capabilities/agents/lua/escrow-flight.lua; both keys in the escrow wallet's
 * shard, one hash slot on a Redis Cluster):
 * - a call `enter`s before its prelude; it is refused once the escrow is
 *   closed, so nothing new can charge an escrow after its revocation;
 * - it `leave`s once its charge is written (or once it ends without one);
 * - the revocation `close`s the escrow: no call in flight -> release now;
 *   otherwise the call that leaves last releases (and the revocation retries
 *   when the last flight's deadline passes: a gateway that died mid-call
 *   never leaves, its entry lapses at its deadline).
 * A flight's deadline is the chat deadline plus the settlement's retry time,
 * so it lapses only for a call that can no longer charge.
 */
export class EscrowFlights {
  private readonly redis: RedisClient & WithFlightScript;

  constructor(redis: RedisClient, readonly leaseMs: number) {
    this.redis = redis as RedisClient & WithFlightScript;
    if (!('escrowFlight' in redis)) redis.defineCommand('escrowFlight', { numberOfKeys: 2, lua: SCRIPT });
  }

  /** Register a call on the escrow; false when the escrow is closed (the key was revoked). */
  async enter(walletId: string, requestId: string): Promise<boolean> {
    return (await this.run('enter', walletId, requestId)) === 1;
  }

  /** The call is done with the escrow; true when the escrow is closed and this was its last call (release now). */
  async leave(walletId: string, requestId: string): Promise<boolean> {
    return (await this.run('leave', walletId, requestId)) === 0;
  }

  /** Close the escrow to new calls (idempotent); the number of calls still in flight on it. */
  async close(walletId: string): Promise<number> {
    return Math.max(0, await this.run('close', walletId, ''));
  }

  private run(op: FlightOp, walletId: string, member: string): Promise<number> {
    return this.redis.escrowFlight(agentRedisKeys.escrowFlights(walletId), agentRedisKeys.escrowEnd(walletId), op, member, this.leaseMs, END_MARKER_TTL_S);
  }
}
