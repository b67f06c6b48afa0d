import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../domain/errors';
import { isDuplicateKey, type MongoConn } from '../../platform/mongo';
import { keyRing, seal, unseal } from '../../platform/secrets';
import type { Config } from '../../platform/config';
import { newSigningSecret } from './signature';
import { webhookModels, type SigningKey, type WebhookSecretDoc } from './store';

/** After a rotation the previous secret keeps signing (a second signature) this long, so receivers can switch over. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

export interface SecretView {
  object: 'webhook_secret';
  account_id: string;
  id: string;
  /** The plaintext: shown once (in the answer that created or rotated it, or the first read of one made automatically). */
  secret?: string;
  created_at: number;
  previous: { id: string; expires_at: number } | null;
}

const unix = (d: Date) => Math.floor(new Date(d).getTime() / 1000);

/**
 * Per-account signing secrets of task webhooks (docs/webhooks.md). Created
 * by an operator (or automatically by the first submission with a
 * `callback_url`), rotated with a 24-hour overlap, stored sealed, and shown
 * in plaintext exactly once: a reveal is a unique-index insert keyed by the
 * secret's id, so two readers racing cannot both see it.
 */
export class WebhookSecrets {
  private readonly m;

  constructor(private readonly deps: { db: MongoConn; config: Pick<Config, 'KEY_ENCRYPTION_KEY'> & Partial<Pick<Config, 'KEY_ENCRYPTION_KEYS_PREVIOUS'>> }) {
    this.m = webhookModels(deps.db.conn);
  }

  private newKey(): { key: SigningKey; plaintext: string } {
    const plaintext = newSigningSecret();
    return { plaintext, key: { id: `whsk_${randomBytes(8).toString('hex')}`, sealed: seal(plaintext, this.deps.config.KEY_ENCRYPTION_KEY), created_at: new Date() } };
  }

  private view(doc: WebhookSecretDoc, plaintext?: string): SecretView {
    const prev = doc.previous && new Date(doc.previous.expires_at).getTime() > Date.now() ? doc.previous : null;
    return {
      object: 'webhook_secret', account_id: doc._id, id: doc.current.id, ...(plaintext ? { secret: plaintext } : {}),
      created_at: unix(doc.current.created_at), previous: prev ? { id: prev.id, expires_at: unix(prev.expires_at) } : null,
    };
  }

  /** Mark a key's plaintext as shown; true only the first time. */
  private async claimReveal(keyId: string): Promise<boolean> {
    try {
      await this.m.Reveal.create({ _id: keyId, created_at: new Date() });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** Create the account's secret; 409 when it has one (rotate it instead). */
  async create(accountId: string): Promise<SecretView> {
    const { key, plaintext } = this.newKey();
    const doc: WebhookSecretDoc = { _id: accountId, current: key, previous: null, updated_at: new Date() };
    try {
      await this.m.Secret.create(doc);
    } catch (err) {
      if (isDuplicateKey(err)) {
        throw new GatewayError('invalid_request', `account ${accountId} already has a webhook signing secret; rotate it with POST .../webhook-secret/rotate`, { status: 409 });
      }
      throw err;
    }
    await this.claimReveal(key.id);
    return this.view(doc, plaintext);
  }

  /** A new secret; the old one keeps signing for ROTATION_OVERLAP_MS. Creates one when there is none. */
  async rotate(accountId: string): Promise<SecretView> {
    const existing = await this.m.Secret.findById(accountId).lean<WebhookSecretDoc>();
    if (!existing) return this.create(accountId);
    const { key, plaintext } = this.newKey();
    const previous = { ...existing.current, expires_at: new Date(Date.now() + ROTATION_OVERLAP_MS) };
    await this.m.Secret.updateOne({ _id: accountId }, { $set: { current: key, previous, updated_at: new Date() } });
    await this.claimReveal(key.id);
    return this.view({ ...existing, current: key, previous }, plaintext);
  }

  /** The secret's metadata; the plaintext too if it was never shown (a secret made by a submission). 404 when none. */
  async read(accountId: string): Promise<SecretView> {
    const doc = await this.m.Secret.findById(accountId).lean<WebhookSecretDoc>();
    if (!doc) throw new GatewayError('not_found', `account ${accountId} has no webhook signing secret`, { status: 404, type: 'invalid_request_error' });
    const first = await this.claimReveal(doc.current.id);
    return this.view(doc, first ? unseal(doc.current.sealed, keyRing(this.deps.config)) : undefined);
  }

  /** Make sure the account has a secret before a callback is accepted (an insert; a racing twin loses harmlessly). */
  async ensure(accountId: string): Promise<void> {
    if (await this.m.Secret.exists({ _id: accountId })) return;
    const { key } = this.newKey();
    await this.m.Secret.create({ _id: accountId, current: key, previous: null, updated_at: new Date() }).catch((err: unknown) => {
      if (!isDuplicateKey(err)) throw err;
    });
  }

  /** The plaintext secrets a delivery signs with now: the current one, then the previous one while it overlaps. */
  async signingSecrets(accountId: string, now = Date.now()): Promise<string[]> {
    const doc = await this.m.Secret.findById(accountId).lean<WebhookSecretDoc>();
    if (!doc) return [];
    const k = keyRing(this.deps.config);
    const out = [unseal(doc.current.sealed, k)];
    if (doc.previous && new Date(doc.previous.expires_at).getTime() > now) out.push(unseal(doc.previous.sealed, k));
    return out;
  }
}
