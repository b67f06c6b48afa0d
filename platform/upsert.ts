/**
 * True for a duplicate-key error from a unique index (MongoDB and FerretDB both use 11000). Here, not in
 * platform/mongo.ts (which re-exports it), so code that runs on the driver alone (the knowledge compile
 * thread) does not load mongoose.
 */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}

/** How often an upsert that lost an insert race is run again before its error is let through. */
const RACE_TRIES = 4;

/**
 * Runs an upsert (`replaceOne`/`updateOne` with `upsert: true`) again when it lost an insert race.
 * Two upserts of a missing document may both find nothing and both insert: one wins, the other gets
 * E11000 (MongoDB documents this; FerretDB v1, which reads then writes, does it more often). Run
 * again, the loser finds the winner's document and replaces or updates it as it meant to, so the
 * caller never sees the race. Whatever else fails is thrown at once.
 */
export async function upsertRacing<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (!isDuplicateKey(err) || attempt >= RACE_TRIES) throw err;
      // The winner's insert is done by the time the duplicate is reported; a short random pause
      // spreads a crowd of losers.
      await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
    }
  }
}
