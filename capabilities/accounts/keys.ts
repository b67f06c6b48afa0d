import { isDuplicateKey } from '../../platform/mongo';
import { Signal } from '../../platform/signal';
import { type AccountModels, type ApiKeyDoc, accountRedisKeys } from './store';
import { type RedisClient } from '../../platform/redis';
import { seal, sha256Hex, unseal } from '../../platform/secrets';
import { KEY_PATTERN, KEY_PREFIX_LENGTH, KEY_TAIL_LENGTH, type KeyRecord } from '../../domain/api-key';
import { generateApiKey, newId } from '../../platform/ids';
import { GatewayError } from '../../domain/errors';
import { changeRecord } from '../../platform/record-lock';

function keyStoreBusy(cause?: unknown): GatewayError {
  return new GatewayError('internal_error', 'the key change could not be confirmed (a store is briefly unavailable); retry the request', {
    headers: { 'retry-after': '1' }, cause,
  });
}

export interface NewKeyInput {
  name: string;
  allowed_models?: string[] | null;
  expires_at?: Date | null;
  enabled?: boolean;
  spend_cap_nano?: number | null;
  /** A deterministic id (agent keys: issuing twice finds the same key). */
  id?: string;
  agent_id?: string | null;
  wallet_id?: string | null;
}

export type KeyPatch = Partial<Omit<NewKeyInput, 'name' | 'id' | 'agent_id' | 'wallet_id'>> & { name?: string };

export function toKeyRecord(doc: ApiKeyDoc): KeyRecord {
  return {
    id: doc._id,
    account_id: doc.account_id,
    name: doc.name,
    prefix: doc.prefix,
    kind: doc.kind,
    allowed_models: doc.allowed_models ?? null,
    expires_at: doc.expires_at ? doc.expires_at.getTime() : null,
    enabled: doc.enabled,
    deleted: doc.deleted_at !== null,
    spend_cap_nano: doc.spend_cap_nano ?? null,
    agent_id: doc.agent_id ?? null,
    wallet_id: doc.wallet_id ?? null,
  };
}

/**
 * API keys: plaintext shown once at creation and revealable later (AES-256-GCM),
 * looked up by sha256. Every change is written to Mongo, then to the Redis
 * record all gateway instances read on each request, so it applies at once.
 */
export class KeyService {
  /** The hash of every key whose record this process published (the auth lookup stops acting on its guess). */
  readonly published = new Signal<string>();

  constructor(
    private readonly db: AccountModels,
    private readonly redis: RedisClient,
    private readonly opts: { encryptionKey: string; serviceTag: string; /** Earlier keys still read (KEY_ENCRYPTION_KEYS_PREVIOUS). */ previousKeys?: readonly string[] },
  ) {}

  async create(accountId: string, input: NewKeyInput): Promise<{ doc: ApiKeyDoc; plaintext: string }> {
    const plaintext = generateApiKey(this.opts.serviceTag);
    const doc = await this.insert(accountId, input, plaintext, 'standard');
    return { doc, plaintext };
  }

  /** Import an early key that exists only as a hash: it works but can never be revealed. */
  async importLegacy(accountId: string, input: NewKeyInput, plaintext: string): Promise<ApiKeyDoc> {
    // Only what authentication accepts (gateway/middleware/auth.ts): any other key would be refused forever.
    if (!KEY_PATTERN.test(plaintext)) {
      throw new GatewayError('invalid_request', 'key must be a key authentication accepts: sk-<8 lowercase letters or digits>-<64 lowercase hex characters>', { param: 'key' });
    }
    try {
      return await this.insert(accountId, input, plaintext, 'legacy');
    } catch (err) {
      // The hash is unique: a key already known (imported before, or issued here) cannot be imported again.
      if (isDuplicateKey(err)) throw new GatewayError('invalid_request', 'this key is already registered', { status: 409, param: 'key' });
      throw err;
    }
  }

  private async insert(accountId: string, input: NewKeyInput, plaintext: string, kind: ApiKeyDoc['kind']): Promise<ApiKeyDoc> {
    const doc: ApiKeyDoc = {
      _id: input.id ?? newId('key'),
      account_id: accountId,
      name: input.name,
      kind,
      prefix: plaintext.slice(0, KEY_PREFIX_LENGTH),
      tail: plaintext.slice(-KEY_TAIL_LENGTH),
      hash: sha256Hex(plaintext),
      secret: kind === 'standard' ? seal(plaintext, this.opts.encryptionKey) : null,
      allowed_models: input.allowed_models ?? null,
      expires_at: input.expires_at ?? null,
      enabled: input.enabled ?? true,
      deleted_at: null,
      spend_cap_nano: input.spend_cap_nano ?? null,
      agent_id: input.agent_id ?? null,
      wallet_id: input.wallet_id ?? null,
      created_at: new Date(),
    };
    await this.db.ApiKey.create(doc);
    await this.publish(doc);
    return doc;
  }

  async get(id: string): Promise<ApiKeyDoc> {
    const doc = await this.db.ApiKey.findById(id).lean<ApiKeyDoc>();
    if (!doc && /^akey_/.test(id)) {
      // An agent key's own id: it is managed by the agent-key API; its API key record is `key_<same suffix>`.
      throw new GatewayError('invalid_request', `${id} is an agent key: it is viewed, revoked and deleted through /admin/v1/agent-keys/${id} (docs/agents.md); its API key record here is ${id.replace(/^akey_/, 'key_')}, read-only`, { status: 409 });
    }
    if (!doc) throw new GatewayError('not_found', `no key ${id}`, { status: 404, type: 'invalid_request_error' });
    return doc;
  }

  /** The key's distinguishing tail: stored since keys carry one; an older key's is read from its sealed plaintext; a legacy hash-only key has none. */
  tailOf(doc: Pick<ApiKeyDoc, 'tail' | 'secret'>): string | null {
    if (doc.tail) return doc.tail;
    if (!doc.secret) return null;
    try {
      return unseal(doc.secret, this.opts.encryptionKey).slice(-KEY_TAIL_LENGTH);
    } catch {
      return null;
    }
  }

  async listByAccount(accountId: string): Promise<ApiKeyDoc[]> {
    return this.db.ApiKey.find({ account_id: accountId }).lean<ApiKeyDoc[]>();
  }

  /** `lifecycle`: the agent-key service, which audits every view; the plaintext of an agent key is shown nowhere else. */
  async reveal(id: string, opts: { lifecycle?: boolean } = {}): Promise<string> {
    const doc = await this.get(id);
    if (doc.agent_id && !opts.lifecycle) throw agentKeyManaged();
    if (!doc.secret) {
      throw new GatewayError('invalid_request', 'this key is a hash-only legacy key and cannot be revealed', { status: 409 });
    }
    return unseal(doc.secret, [this.opts.encryptionKey, ...(this.opts.previousKeys ?? [])]);
  }

  /** `lifecycle`: the agent-key service itself; anyone else may not change an agent key (its revocation is final). */
  async update(id: string, patch: KeyPatch, opts: { lifecycle?: boolean } = {}): Promise<ApiKeyDoc> {
    return this.change(id, (doc) => {
      if (doc.deleted_at) throw new GatewayError('invalid_request', 'the key is deleted', { status: 409 });
      if (doc.agent_id && !opts.lifecycle) throw agentKeyManaged();
      return { ...doc, ...definedOnly(patch) } as ApiKeyDoc;
    });
  }

  async remove(id: string, opts: { lifecycle?: boolean } = {}): Promise<ApiKeyDoc> {
    return this.change(id, (doc) => {
      if (doc.agent_id && !opts.lifecycle) throw agentKeyManaged();
      return { ...doc, enabled: false, deleted_at: doc.deleted_at ?? new Date() };
    });
  }

  /**
   * One change of a key, acknowledged only once every gateway judges by it:
   * one at a time per key, on the fresh document, Mongo then Redis
   * (`changeRecord` in platform/record-lock.ts, shared with accounts).
   */
  private change(id: string, next: (doc: ApiKeyDoc) => ApiKeyDoc): Promise<ApiKeyDoc> {
    return changeRecord({
      redis: this.redis, lockKey: accountRedisKeys.keyLock(id), busy: keyStoreBusy,
      read: () => this.get(id), save: (doc) => this.db.ApiKey.replaceOne({ _id: id }, doc), publish: (doc) => this.publish(doc),
    }, next);
  }

  /**
   * Which key a hash names: immutable (key id, account, wallet), so callers
   * may cache it in process for good. Redis first, Mongo when Redis has none.
   */
  async ownerOfHash(hash: string): Promise<KeyOwner | null> {
    const cached = await this.redis.get(accountRedisKeys.keyHash(hash));
    if (cached) return JSON.parse(cached) as KeyOwner;
    const doc = await this.db.ApiKey.findOne({ hash }).lean<ApiKeyDoc>();
    if (!doc) return null;
    await this.fill(doc);
    return ownerOf(doc);
  }

  /** The record a request is judged by: Redis first, Mongo when Redis has none. */
  async lookupByHash(hash: string): Promise<KeyRecord | null> {
    const owner = await this.ownerOfHash(hash);
    return owner ? this.record(owner) : null;
  }

  /** The mutable state of a key (enabled, expiry, cap...), kept under its account's shard. */
  async record(owner: KeyOwner): Promise<KeyRecord | null> {
    const cached = await this.redis.get(accountRedisKeys.keyRecord(owner.accountId, owner.keyId));
    if (cached) return JSON.parse(cached) as KeyRecord;
    const doc = await this.db.ApiKey.findById(owner.keyId).lean<ApiKeyDoc>();
    return doc ? this.fill(doc) : null;
  }

  /**
   * A record rebuilt from Mongo on a miss (Redis lost it, or never had it) is
   * written only where none is: the document was read before the write, so a
   * change (`change`) that lands in between must not be overwritten by the
   * older state it read (a disabled key served again).
   */
  private async fill(doc: ApiKeyDoc): Promise<KeyRecord> {
    const record = toKeyRecord(doc);
    await Promise.all([
      this.redis.set(accountRedisKeys.keyRecord(doc.account_id, doc._id), JSON.stringify(record), 'NX'),
      this.redis.set(accountRedisKeys.keyHash(doc.hash), JSON.stringify(ownerOf(doc))),
    ]);
    return record;
  }

  private async publish(doc: ApiKeyDoc): Promise<KeyRecord> {
    const record = toKeyRecord(doc);
    await Promise.all([
      this.redis.set(accountRedisKeys.keyRecord(doc.account_id, doc._id), JSON.stringify(record)),
      this.redis.set(accountRedisKeys.keyHash(doc.hash), JSON.stringify(ownerOf(doc))),
    ]);
    this.published.emit(doc.hash);
    return record;
  }
}

/** What a key hash resolves to; never changes for the life of the key. */
export interface KeyOwner {
  keyId: string;
  accountId: string;
  walletId: string;
}

function ownerOf(doc: ApiKeyDoc): KeyOwner {
  return { keyId: doc._id, accountId: doc.account_id, walletId: doc.wallet_id ?? doc.account_id };
}

function agentKeyManaged(): GatewayError {
  return new GatewayError('invalid_request', 'this is an agent key: it is viewed, revoked and deleted through /admin/v1/agent-keys/{id} (docs/agents.md)', { status: 409 });
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
