import type { ChannelDoc, CatalogueModels } from './store';
import { isDuplicateKey } from '../../platform/mongo';
import { seal } from '../../platform/secrets';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { GatewayError, errors } from '../../domain/errors';
import type { Catalogue } from '../../domain/catalogue';
import {
  channelProblems, type ChannelPatch, type ChannelRecord, type CredentialsInput, type NewChannel, type StoredCredentials,
} from '../../domain/channels';
import { getTranslator } from '../../protocols';
import type { Protocol } from '../../protocols/types';
import type { CatalogueCache } from './catalogue-cache';
import { storedRecord } from './records';
import type { ChannelHealth } from './channel-health';

/** A channel with its bookkeeping, as the management API shows it. */
export interface ChannelEntry {
  record: ChannelRecord;
  origin: ChannelDoc['origin'];
  created_at: Date;
  updated_at: Date;
}

/**
 * Channels as managed objects (docs/channels.md): create, edit, delete, list.
 * Every change is validated against the catalogue (models exist, the adapter
 * can serve each protocol), secrets are sealed with KEY_ENCRYPTION_KEY before
 * they are stored, and every gateway and worker picks the change up at once
 * (CatalogueCache.changed). Writes are single-document operations on the
 * channel's own id; the create is an insert against the unique `_id`.
 */
export class ChannelService {
  constructor(
    private readonly deps: { db: CatalogueModels; config: Pick<Config, 'KEY_ENCRYPTION_KEY' | 'UPSTREAM_KEYS'>; cache: CatalogueCache; health: ChannelHealth; log: Logger },
  ) {}

  private catalogue(): Catalogue {
    return this.deps.cache.current();
  }

  async list(): Promise<ChannelEntry[]> {
    const docs = await this.deps.db.Channel.find({ deleted_at: null }).lean<ChannelDoc[]>();
    return docs.map(entryOf).sort((a, b) => a.record.priority - b.record.priority || a.record.id.localeCompare(b.record.id));
  }

  async get(id: string): Promise<ChannelEntry> {
    const doc = await this.deps.db.Channel.findById(id).lean<ChannelDoc>();
    if (!doc || doc.deleted_at) throw errors.notFound(`no channel '${id}'`);
    return entryOf(doc);
  }

  async create(input: NewChannel): Promise<ChannelEntry> {
    const record: ChannelRecord = {
      id: input.id, vendor: input.vendor, adapter: input.adapter, base_url: input.base_url,
      credentials: this.store(input.credentials), priority: input.priority, weight: input.weight,
      protocols: input.protocols ?? null, capabilities: input.capabilities, models: this.canonicalModels(input.models),
      enabled: input.enabled, note: input.note ?? null,
    };
    this.validate(record);
    const now = new Date();
    const doc: ChannelDoc = { _id: record.id, doc: record, origin: 'api', deleted_at: null, created_at: now, updated_at: now };
    try {
      await this.deps.db.Channel.create(doc);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // The id of a deleted channel may be used again; a live one may not.
      const prior = await this.deps.db.Channel.findById(record.id).lean<ChannelDoc>();
      if (!prior?.deleted_at) throw new GatewayError('invalid_request', `a channel '${record.id}' exists`, { status: 409, param: 'id' });
      await this.deps.db.Channel.replaceOne({ _id: record.id }, doc);
    }
    await this.changed();
    this.deps.log.info('channel created', { channel: record.id });
    return this.get(record.id);
  }

  async update(id: string, patch: ChannelPatch): Promise<ChannelEntry> {
    const current = await this.get(id);
    const r = current.record;
    const record: ChannelRecord = {
      ...r,
      ...(patch.vendor !== undefined ? { vendor: patch.vendor } : {}),
      ...(patch.adapter !== undefined ? { adapter: patch.adapter } : {}),
      ...(patch.base_url !== undefined ? { base_url: patch.base_url } : {}),
      ...(patch.credentials !== undefined ? { credentials: this.store(patch.credentials) } : {}),
      ...(patch.priority !== undefined ? { priority: patch.priority } : {}),
      ...(patch.weight !== undefined ? { weight: patch.weight } : {}),
      ...(patch.protocols !== undefined ? { protocols: patch.protocols } : {}),
      ...(patch.capabilities !== undefined ? { capabilities: patch.capabilities } : {}),
      ...(patch.models !== undefined ? { models: this.canonicalModels(patch.models) } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
      ...(patch.note !== undefined ? { note: patch.note } : {}),
    };
    this.validate(record);
    await this.deps.db.Channel.updateOne({ _id: id }, { $set: { doc: record, origin: 'api', updated_at: new Date() } });
    await this.changed();
    this.deps.log.info('channel updated', { channel: id, fields: Object.keys(patch) });
    return this.get(id);
  }

  /** Delete: the channel leaves every ladder; a tombstone keeps a later seed from bringing it back. */
  async remove(id: string): Promise<ChannelEntry> {
    const current = await this.get(id);
    await this.deps.db.Channel.updateOne({ _id: id }, { $set: { origin: 'api', deleted_at: new Date(), updated_at: new Date() } });
    await this.changed();
    await this.deps.health.forget(id);
    this.deps.log.info('channel deleted', { channel: id });
    return current;
  }

  /** Is the env variable a channel names set in this process? */
  envConfigured(name: string): boolean {
    return !!this.deps.config.UPSTREAM_KEYS[name];
  }

  private async changed(): Promise<void> {
    await this.deps.cache.changed();
  }

  /** Seal a secret (AES-256-GCM, the API keys' scheme); keep its last four characters as a hint. */
  private store(input: CredentialsInput): StoredCredentials {
    if ('env' in input) return { type: 'env', env: input.env };
    if ('secret' in input) return { type: 'secret', sealed: seal(input.secret, this.deps.config.KEY_ENCRYPTION_KEY), hint: input.secret.slice(-4) };
    return { type: 'none' };
  }

  /** Aliases become the model's current id, so a ladder never depends on an alias. */
  private canonicalModels(models: ChannelRecord['models']): ChannelRecord['models'] {
    return models.map((m) => ({ ...m, model: this.catalogue().resolve(m.model)?.id ?? m.model }));
  }

  private validate(record: ChannelRecord): void {
    const catalogue = this.catalogue();
    const problems = channelProblems(
      record,
      (id) => catalogue.resolve(id)?.endpoint_type,
      (client, upstream) => !!getTranslator(client as Protocol, upstream as Protocol),
    );
    if (problems.length) throw errors.invalidRequest(problems.map((p) => `${p.param}: ${p.message}`).join('; '), problems[0].param);
  }
}

function entryOf(doc: ChannelDoc): ChannelEntry {
  return { record: storedRecord(doc.doc), origin: doc.origin, created_at: doc.created_at, updated_at: doc.updated_at };
}
