import type { Connection } from 'mongoose';
import { connectMongo, type MongoConn } from '../platform/mongo';
import type { Logger } from '../platform/logger';
import { accountModels, type AccountModels } from './accounts/store';
import { usageModels, type UsageModels } from './usage/store';
import { mediaModels, type MediaModels } from './media/store';
import { catalogueModels, type CatalogueModels } from './catalogue/store';
import { knowledgeModels, type KnowledgeModels } from './knowledge/store';

/**
 * The collections every process opens at start (their indexes built before it
 * serves), gathered from the capabilities that own them. A capability's code
 * takes only its own models (and those of the capabilities it reads); the
 * processes hold this whole set. Collections used by one capability alone
 * (agents, webhooks, batches, billing, the key audit) are registered where
 * they are first used, from that capability's store.
 */
export interface Db extends MongoConn, AccountModels, UsageModels, MediaModels, CatalogueModels, KnowledgeModels {}

export function dbModels(conn: Connection): Omit<Db, 'conn'> {
  return { ...accountModels(conn), ...usageModels(conn), ...mediaModels(conn), ...catalogueModels(conn), ...knowledgeModels(conn) };
}

/** Connect to Mongo and open every capability's collections. */
export function connectStore(url: string, log?: Logger): Promise<Db> {
  return connectMongo(url, dbModels, log);
}
