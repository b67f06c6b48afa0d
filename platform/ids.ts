import { randomBytes, randomUUID } from 'node:crypto';

/** Random ids with a readable kind prefix (node:crypto, hence infra: domain/ stays free of I/O). */
export function newId(kind: 'acct' | 'key' | 'avatar' | 'voice' | 'evt' | 'user' | 'doc' | 'build' | 'agent' | 'akey' | 'aud' | 'audit' | 'cs' | 'topup'): string {
  return `${kind}_${randomBytes(12).toString('hex')}`;
}

/** A new API key: `sk-` + the deployment's 8-character service tag + `-` + 64 hex (domain/api-key.ts KEY_PATTERN). */
export function generateApiKey(serviceTag: string): string {
  return `sk-${serviceTag}-${randomBytes(32).toString('hex')}`;
}

let idMs = -1;
let idMsHex = '';

/**
 * An id whose store rows are written in time order: `{kind}_` + 24 hex, the first 11 the millisecond
 * it was made, then 52 random bits. Time first, so the rows it names (a call's usage row and its ledger
 * op `{id}:charge`; a task's document, its ledger ops and usage row) go in at the right edge of the
 * store's unique `_id` indexes instead of at a random place in them: on the embedded store (FerretDB on
 * SQLite) each row of a batch of random ids lands on an index page of its own, and its CPU for a chat
 * call's two rows grew with the table, 122-126 us in the first 50,000 calls and 132-153 us by 200,000,
 * where time-first ids stayed at 75-91 us (`npm run bench:store-rows`); an async image task's store
 * CPU 4.37-4.70 -> 4.07-4.40 ms in `bench:media`'s far smaller table. MongoDB's B-trees prefer it for
 * the same reason (its ObjectId is time-first too). Two ids collide only within one millisecond: at
 * 3,000 a second, about once in 30,000 years.
 */
export function newTimeFirstId(kind: 'req' | 'task'): string {
  const ms = Date.now();
  if (ms !== idMs) {
    idMs = ms;
    idMsHex = ms.toString(16).padStart(11, '0');
  }
  // randomUUID draws from a cached entropy pool (cheaper a call than randomBytes); its characters 0-7
  // and 24-35 are random hex (the version and variant digits sit between them).
  const u = randomUUID();
  return `${kind}_${idMsHex}${u.slice(0, 8)}${u.slice(24, 29)}`;
}

/** A request id (`x-gateway-trace`, the call's usage row): `req_` + 24 hex, time first. */
export function newRequestId(): string {
  return newTimeFirstId('req');
}
