import type { MongoConn } from '../../platform/mongo';
import { keyId, seal, unseal, type Sealed } from '../../platform/secrets';

/**
 * Key rotation's second half (docs/operations.md): every sealed value in the store not yet under
 * the current key is opened with the keyring and sealed again with the current key. Where values live:
 * API keys (`api_keys.secret`), channel secrets (`channels.doc.credentials.sealed`) and webhook signing
 * secrets (`webhook_secrets.current.sealed`, `.previous.sealed`). Each write is conditional on the old
 * ciphertext, so a value changed meanwhile is left alone (counted as `changed`); run it again to finish.
 */
interface Place {
  collection: string;
  /** Dotted paths of the sealed values a document may hold. */
  paths: string[];
}

const PLACES: Place[] = [
  { collection: 'api_keys', paths: ['secret'] },
  { collection: 'channels', paths: ['doc.credentials.sealed'] },
  { collection: 'webhook_secrets', paths: ['current.sealed', 'previous.sealed'] },
];

export interface ResealCounts {
  /** Already sealed with the current key. */
  current: number;
  /** Re-sealed now (or would be, in a dry run). */
  resealed: number;
  /** Changed by someone else between the read and the write: left for the next run. */
  changed: number;
  /** Not readable with any key of the ring: `collection/_id path`. */
  unreadable: string[];
}

function at(doc: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), doc);
}

const isSealed = (v: unknown): v is Sealed =>
  !!v && typeof v === 'object' && typeof (v as Sealed).iv === 'string' && typeof (v as Sealed).tag === 'string' && typeof (v as Sealed).data === 'string';

/** `ring[0]` is the current key. With `dryRun`, nothing is written. */
export async function resealAll(db: Pick<MongoConn, 'conn'>, ring: readonly string[], opts: { dryRun?: boolean } = {}): Promise<Record<string, ResealCounts>> {
  const mongo = db.conn.db;
  if (!mongo) throw new Error('the store is not connected');
  const [current] = ring;
  if (!current) throw new Error('no current key');
  const currentId = keyId(current);
  const out: Record<string, ResealCounts> = {};
  for (const place of PLACES) {
    const counts: ResealCounts = { current: 0, resealed: 0, changed: 0, unreadable: [] };
    out[place.collection] = counts;
    const coll = mongo.collection<Record<string, unknown>>(place.collection);
    for await (const doc of coll.find({})) {
      for (const path of place.paths) {
        const sealed = at(doc, path);
        if (!isSealed(sealed)) continue;
        if (sealed.kid === currentId) {
          counts.current++;
          continue;
        }
        let plaintext: string;
        try {
          plaintext = unseal(sealed, ring);
        } catch {
          counts.unreadable.push(`${place.collection}/${String(doc._id)} ${path}`);
          continue;
        }
        if (opts.dryRun) {
          counts.resealed++;
          continue;
        }
        const res = await coll.updateOne({ _id: doc._id, [`${path}.data`]: sealed.data } as never, { $set: { [path]: seal(plaintext, current) } });
        if (res.modifiedCount === 1) counts.resealed++;
        else counts.changed++;
      }
    }
  }
  return out;
}
