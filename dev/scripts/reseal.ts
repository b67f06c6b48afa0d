/**
 * `npm run reseal [-- --dry-run]`: re-seal every stored secret under KEY_ENCRYPTION_KEY, reading the
 * older ones with KEY_ENCRYPTION_KEYS_PREVIOUS (key rotation, docs/operations.md). Needs MONGO_URL,
 * KEY_ENCRYPTION_KEY and KEY_ENCRYPTION_KEYS_PREVIOUS as the gateway has them. Prints one JSON line per
 * collection and a summary; exits 1 while any value is unreadable or was changed during the run.
 */
import { loadConfigOrExit } from '../../platform/config';
import { connectStore } from '../../capabilities/store';
import { keyId, keyRing } from '../../platform/secrets';
import { resealAll } from '../../capabilities/accounts/reseal';

const dryRun = process.argv.includes('--dry-run');
const config = loadConfigOrExit({ ADMIN_TOKEN: 'not-needed-to-reseal', ...process.env }, 'npm run reseal');
const ring = keyRing(config);
const db = await connectStore(config.MONGO_URL);
try {
  const result = await resealAll(db, ring, { dryRun });
  let resealed = 0;
  let left = 0;
  for (const [collection, c] of Object.entries(result)) {
    console.log(JSON.stringify({ collection, current: c.current, [dryRun ? 'to_reseal' : 'resealed']: c.resealed, changed: c.changed, unreadable: c.unreadable }));
    resealed += c.resealed;
    left += c.unreadable.length + c.changed;
  }
  const summary = { key: keyId(ring[0]!), previous_keys: ring.slice(1).map(keyId), dry_run: dryRun, [dryRun ? 'to_reseal' : 'resealed']: resealed, left };
  console.log(JSON.stringify(summary));
  if (left > 0) {
    console.error(`reseal: ${left} value(s) left: unreadable ones need their key in KEY_ENCRYPTION_KEYS_PREVIOUS; changed ones, another run`);
    process.exitCode = 1;
  } else if (!dryRun && ring.length > 1) {
    console.error('reseal: every value is under the current key; KEY_ENCRYPTION_KEYS_PREVIOUS can now be removed');
  }
} finally {
  await db.conn.close();
}
