/**
 * The knowledge collections' names, in one place for the mongoose models (store.ts) and the driver-only
 * code of the compile thread (build-writes.ts, build-parts.ts), which must not load mongoose.
 */
export const PAGES_COLLECTION = 'kb_pages';
export const BUILDS_COLLECTION = 'kb_builds';
