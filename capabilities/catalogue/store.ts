import { Schema, type Connection, type Model } from 'mongoose';
import { docOptions, modelOn } from '../../platform/mongo';

/**
 * The catalogue as stored: models, pricing rules and channels.
 */

export interface CatalogueModelDoc {
  _id: string;
  doc: unknown;
  updated_at: Date;
}

export interface CatalogueRulesDoc {
  _id: string;
  doc: unknown;
  updated_at: Date;
}

/**
 * A channel (domain/channels.ts ChannelRecord, in `doc`). `origin` says who
 * wrote it last: the catalogue seed rewrites its own channels and leaves the
 * ones an operator created or edited alone; a deleted channel stays as a
 * tombstone so a later seed does not bring it back.
 */
export interface ChannelDoc {
  _id: string;
  doc: unknown;
  origin: 'seed' | 'api';
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const CatalogueModelSchema = new Schema<CatalogueModelDoc>({ _id: String, doc: Schema.Types.Mixed, updated_at: Date }, docOptions);
const CatalogueRulesSchema = new Schema<CatalogueRulesDoc>({ _id: String, doc: Schema.Types.Mixed, updated_at: Date }, docOptions);
const ChannelSchema = new Schema<ChannelDoc>(
  { _id: String, doc: Schema.Types.Mixed, origin: String, deleted_at: { type: Date, default: null }, created_at: Date, updated_at: Date },
  // Keep empty objects (`capabilities: {}`): the record is read back as written.
  { ...docOptions, minimize: false },
);

export interface CatalogueModels {
  CatalogueModel: Model<CatalogueModelDoc>;
  CatalogueRules: Model<CatalogueRulesDoc>;
  Channel: Model<ChannelDoc>;
}

/** The collections on a connection (registered once per connection; capabilities/store.ts opens them at start). */
export function catalogueModels(conn: Connection): CatalogueModels {
  return {
    CatalogueModel: modelOn(conn, 'CatalogueModel', CatalogueModelSchema, 'catalogue_models'),
    CatalogueRules: modelOn(conn, 'CatalogueRules', CatalogueRulesSchema, 'catalogue_rules'),
    Channel: modelOn(conn, 'Channel', ChannelSchema, 'channels'),
  };
}

/** The catalogue's Redis key names. */
export const catalogueRedisKeys = {
  /** Bumped on every channel change: each process's catalogue cache reloads when it moves (capabilities/catalogue/catalogue-cache.ts). */
  catalogueVersion: () => 'catalogue:version',
  /** Each process's last reported circuit-breaker state of a channel, by process id (capabilities/catalogue/channel-health.ts). */
  channelHealth: (channelId: string) => `chan:health:${channelId}`,
  /** Pub/sub channel of channel changes: not a key, so ioredis does not prefix it; the deployment prefix is added here. */
  changed: (prefix: string) => `${prefix}catalogue:changed`,
};
