import { Schema, type Connection, type Model } from 'mongoose';
import { docOptions, modelOn } from '../../platform/mongo';

/** The answers kept for Idempotency-Key replays (gateway/middleware/idempotency.ts): HTTP answers, so the gateway's own collection. */
export interface IdempotencyDoc {
  /** `{accountId}:{sha256(Idempotency-Key)}`: the claim is this insert. */
  _id: string;
  account_id: string;
  /**
   * The endpoint the key was claimed on (`POST /v1/images/generations`): the same body sent to another endpoint is
   * another request (spec 2 section 4.1). Absent on claims stored before it was recorded: those compare bodies only.
   */
  endpoint?: string | null;
  body_hash: string;
  state: 'in_flight' | 'done';
  /** Random id of the request holding the claim. */
  holder: string;
  /** In flight: the claim lapses after this (10 min). Done: kept until this (7 days). */
  until: Date;
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
  not_cached: boolean;
  created_at: Date;
}

const IdempotencySchema = new Schema<IdempotencyDoc>(
  {
    _id: String, account_id: String, endpoint: { type: String, default: null }, body_hash: String, state: String, holder: String, until: Date,
    status: { type: Number, default: null }, headers: { type: Schema.Types.Mixed, default: null }, body: { type: String, default: null },
    not_cached: { type: Boolean, default: false }, created_at: Date,
  },
  docOptions,
);

/** The collection on a connection (registered once per connection). */
export function idempotencyModel(conn: Connection): Model<IdempotencyDoc> {
  return modelOn(conn, 'Idempotency', IdempotencySchema, 'idempotency');
}

/** The idempotency answers' Redis key names. */
export const idempotencyRedisKeys = {
  /** Held by the one request taking over a lapsed claim (gateway/middleware/idempotency.ts). */
  takeover: (id: string) => `idemtakeover:${id}`,
};
