import { readFileSync } from 'node:fs';
import type { ChannelDoc, CatalogueModels } from './store';
import { unseal } from '../../platform/secrets';
import { upsertRacing } from '../../platform/upsert';
import {
  Catalogue, CatalogueFileSchema, liftInlineChannels, ModelSchema, PricingRulesSchema, substituteUrl, type CatalogueFile,
} from '../../domain/catalogue';
import { resolveChannels, type ChannelRecord, type ChannelSeed } from '../../domain/channels';

export function readCatalogueFile(path: string): CatalogueFile {
  return liftInlineChannels(CatalogueFileSchema.parse(JSON.parse(readFileSync(path, 'utf8'))));
}

/** A seeded channel as stored. */
export function channelRecordOfSeed(c: ChannelSeed): ChannelRecord {
  return {
    id: c.id, vendor: c.vendor, adapter: c.adapter, base_url: c.base_url,
    credentials: 'env' in c.credentials ? { type: 'env', env: c.credentials.env } : { type: 'none' },
    priority: c.priority, weight: c.weight, protocols: c.protocols ?? null, capabilities: c.capabilities,
    models: c.models, enabled: c.enabled, note: c.note ?? null,
  };
}

/**
 * Seed (upsert) the registry into Mongo from the data file. Idempotent, and safe when two processes seed at once.
 * Channels: the file's channels are written unless an operator created,
 * edited or deleted one of the same id through the management API (then the
 * operator's version stays); seeded channels the file no longer lists go.
 */
export async function seedCatalogue(db: CatalogueModels, file: CatalogueFile): Promise<number> {
  const now = new Date();
  await upsertRacing(() => db.CatalogueRules.replaceOne({ _id: 'pricing_rules' }, { doc: file.pricing_rules, updated_at: now }, { upsert: true }));
  for (const m of file.models) {
    await upsertRacing(() => db.CatalogueModel.replaceOne({ _id: m.id }, { doc: m, updated_at: now }, { upsert: true }));
  }
  const existing = new Map((await db.Channel.find({}, { origin: 1, created_at: 1 }).lean<Pick<ChannelDoc, '_id' | 'origin' | 'created_at'>[]>()).map((d) => [d._id, d]));
  for (const c of file.channels) {
    const prior = existing.get(c.id);
    if (prior && prior.origin !== 'seed') continue;
    await upsertRacing(() => db.Channel.replaceOne(
      { _id: c.id },
      { doc: channelRecordOfSeed(c), origin: 'seed', deleted_at: null, created_at: prior?.created_at ?? now, updated_at: now },
      { upsert: true },
    ));
  }
  const listed = new Set(file.channels.map((c) => c.id));
  const gone = [...existing.values()].filter((d) => d.origin === 'seed' && !listed.has(d._id)).map((d) => d._id);
  if (gone.length) await db.Channel.deleteMany({ _id: { $in: gone } });
  return file.models.length;
}

export interface CatalogueEnv {
  /** Substituted for `${VAR}` in channel URLs (SIMULATOR_URL). */
  vars: Record<string, string>;
  /** The `*_API_KEY` variables of the environment (platform/config.ts UPSTREAM_KEYS). */
  upstreamKeys: Readonly<Record<string, string>>;
  /** Unseals channel secrets: KEY_ENCRYPTION_KEY, or the keyring (platform/secrets.ts keyRing). */
  encryptionKey: string | readonly string[];
  /** Told about a channel whose secret does not unseal (a rotated KEY_ENCRYPTION_KEY). */
  onBadSecret?: (channelId: string, err: unknown) => void;
  /** Told about an enabled channel whose base URL names a variable this process does not have. */
  onBadUrl?: (channelId: string, baseUrl: string) => void;
}


/** A stored channel document, with the optional parts a store may have dropped (empty objects) put back. */
export function storedRecord(doc: unknown): ChannelRecord {
  const r = doc as ChannelRecord;
  return { ...r, protocols: r.protocols ?? null, capabilities: r.capabilities ?? {}, models: r.models ?? [], note: r.note ?? null };
}

/** The key a channel sends: the env variable's value, or its unsealed secret (nothing when neither is set). */
export function channelCredentials(c: ChannelRecord, env: CatalogueEnv): { api_key_env?: string; api_key?: string } {
  const cred = c.credentials;
  if (cred.type === 'env') return { api_key_env: cred.env, ...(env.upstreamKeys[cred.env] ? { api_key: env.upstreamKeys[cred.env] } : {}) };
  if (cred.type === 'secret') {
    try {
      return { api_key: unseal(cred.sealed, env.encryptionKey) };
    } catch (err) {
      env.onBadSecret?.(c.id, err);
      return {};
    }
  }
  return {};
}

/** Load the registry from Mongo: models, rules, and each model's ladders from the enabled channels. */
export async function loadCatalogue(db: CatalogueModels, env: CatalogueEnv): Promise<Catalogue> {
  return (await loadCatalogueAndChannels(db, env)).catalogue;
}

/**
 * The registry, and every channel that is not deleted (enabled or not) by id,
 * with its creation time in ms: a channel deleted and created again under the
 * same id has a new one (each process's breakers follow it, ChannelHealth `retain`).
 */
export async function loadCatalogueAndChannels(db: CatalogueModels, env: CatalogueEnv): Promise<{ catalogue: Catalogue; channels: Map<string, number> }> {
  const [rules, models, docs] = await Promise.all([
    db.CatalogueRules.findById('pricing_rules').lean(),
    db.CatalogueModel.find({}).lean(),
    db.Channel.find({}).lean<ChannelDoc[]>(),
  ]);
  const records = docs.map((d) => ({ record: storedRecord(d.doc), live: d.deleted_at === null && storedRecord(d.doc).enabled }));
  // A `${VAR}` URL whose variable is not set in this process leaves the channel out (a relative URL is no upstream).
  const reachable = (c: ChannelRecord) => {
    const ok = /^https?:\/\//.test(substituteUrl(c.base_url, env.vars));
    if (!ok) env.onBadUrl?.(c.id, c.base_url);
    return ok;
  };
  const channels = records.filter((r) => r.live && reachable(r.record)).map((r) => r.record);
  const off = records.filter((r) => !r.live).map((r) => ({ ...r.record, enabled: true }));
  if (!rules) throw new Error('catalogue not seeded: run `npm run seed`');
  const defs = models.map((m) => ModelSchema.parse(m.doc)).sort((a, b) => a.id.localeCompare(b.id));
  const ids = new Map<string, string>();
  for (const m of defs) ids.set(m.id, m.id);
  for (const m of defs) for (const a of m.aliases) if (!ids.has(a)) ids.set(a, m.id);
  const resolve = (list: ChannelRecord[]) => resolveChannels(list, (id) => ids.get(id), (c) => channelCredentials(c, env), (url) => substituteUrl(url, env.vars));
  // A channel written before `created_at` existed counts as created at 0 (not NaN, which would never equal itself).
  const existing = new Map(docs.filter((d) => d.deleted_at === null).map((d) => [d._id, d.created_at ? new Date(d.created_at).getTime() : 0]));
  return { catalogue: new Catalogue(defs, PricingRulesSchema.parse(rules.doc), resolve(channels), resolve(off)), channels: existing };
}
