import type { Page } from '../../domain/knowledge/page';
import { baseKey, toPage, type BaseRef, type PageStore } from './page-store';
import { PageIndex } from './search-index';

/** A base's visible pages at one version, with its lexical index and lookups built once. */
export class Corpus {
  readonly byId: Map<string, Page>;
  private index: PageIndex | null = null;
  private indexing: Promise<PageIndex> | null = null;
  private tagCounts: Map<string, number> | null = null;
  private backlinkMap: Map<string, Page[]> | null = null;

  /** Estimated memory of the pages and their lookups (pageBytes). */
  private readonly pagesBytes: number;

  /**
   * `reusable`: the latest index built for an older version of the base; the
   * new index takes over its analyses of unchanged pages and then lets it go.
   * `onIndexed`: called when the index is built (the cache then counts its memory).
   */
  constructor(
    readonly ref: BaseRef,
    readonly version: number,
    readonly pages: readonly Page[],
    private reusable: PageIndex | null = null,
    private readonly onIndexed: () => void = () => {},
  ) {
    this.byId = new Map(pages.map((p) => [p.id, p]));
    this.pagesBytes = pages.reduce((s, p) => s + pageBytes(p), CORPUS_BYTES);
  }

  /** Estimated memory this corpus holds: its pages, its index (or the older one it waits to reuse). */
  get bytes(): number {
    return this.pagesBytes + ((this.index ?? this.reusable)?.bytes ?? 0);
  }

  /** The index a later version of the base may reuse: this one's, or the one it would have reused. */
  get latestIndex(): PageIndex | null {
    return this.index ?? this.reusable;
  }

  /** The base's lexical index, built on first use in slices (PageIndex.build); concurrent searches share one build. */
  searchIndex(): Promise<PageIndex> {
    if (this.index) return Promise.resolve(this.index);
    this.indexing ??= PageIndex.build(this.pages, this.reusable ? [this.reusable] : []).then((index) => {
      this.index = index;
      this.reusable = null;
      this.indexing = null;
      this.onIndexed();
      return index;
    }, (err: unknown) => {
      this.indexing = null;
      throw err;
    });
    return this.indexing;
  }

  /** Tag -> number of pages carrying it. */
  get tags(): Map<string, number> {
    if (!this.tagCounts) {
      const m = new Map<string, number>();
      for (const p of this.pages) for (const t of new Set(p.tags)) m.set(t, (m.get(t) ?? 0) + 1);
      this.tagCounts = m;
    }
    return this.tagCounts;
  }

  /** Target page id -> pages of this base whose resolved links point at it. */
  get backlinks(): Map<string, Page[]> {
    if (!this.backlinkMap) {
      const m = new Map<string, Page[]>();
      for (const p of this.pages) {
        const targets = new Set([...p.links, ...p.outgoing_links.filter((l) => l.resolved).map((l) => l.id)]);
        for (const id of targets) {
          if (id === p.id) continue;
          const list = m.get(id);
          if (list) list.push(p);
          else m.set(id, [p]);
        }
      }
      this.backlinkMap = m;
    }
    return this.backlinkMap;
  }
}

/**
 * Estimated bytes of a page in memory: its text (one byte a character; two for text outside Latin-1,
 * as V8 stores such strings) and a fixed part for its object, arrays and lookups, fitted with
 * PageIndex's estimate on dev/bench/search-memory.ts (docs/knowledge.md).
 */
const PAGE_BYTES = 1200;
const CORPUS_BYTES = 4096;
const WIDE = /[^\u0000-\u00ff]/;
const textBytes = (s: string) => (WIDE.test(s) ? 2 : 1) * s.length;
function pageBytes(p: Page): number {
  let n = PAGE_BYTES + textBytes(p.title) + textBytes(p.summary) + textBytes(p.body);
  for (const x of p.aliases) n += textBytes(x);
  for (const x of p.tags) n += textBytes(x);
  return n;
}

/**
 * Process-local cache of each base's corpus, keyed by the base's version in
 * Redis (`PageStore.version`). Every read asks Redis for the current versions
 * (one round trip per base), so a build that went live through any gateway
 * instance or worker is seen by the next read here; an unchanged base costs no
 * Mongo query. Concurrent loads of the same version share one query.
 *
 * One entry a base: a newer version replaces the older at once (an older
 * version is never asked for again once Redis moved on). The entries' estimated
 * memory (Corpus.bytes: pages and index) is held under `budgetBytes`, the least
 * recently used dropped first; the entry just used always stays, so a base
 * larger than the whole budget is still searched (and dropped by the next load).
 */
export class CorpusCache {
  private readonly cache = new Map<string, Corpus>();
  private readonly loading = new Map<string, Promise<Corpus>>();
  /** `budgetBytes`: config KB_SEARCH_CACHE_MB in bytes. */
  constructor(private readonly store: PageStore, private readonly opts: { budgetBytes: number }) {}

  /** The cached corpora's estimated memory. */
  get bytes(): number {
    let n = 0;
    for (const c of this.cache.values()) n += c.bytes;
    return n;
  }

  async get(ref: BaseRef): Promise<Corpus> {
    const version = await this.store.version(ref);
    return this.at(ref, version);
  }

  /** `versions`: the bases' current versions when the caller already read them (same order as `refs`). */
  async getMany(refs: readonly BaseRef[], versions?: readonly number[]): Promise<Corpus[]> {
    return Promise.all(refs.map((r, i) => (versions ? this.at(r, versions[i]) : this.get(r))));
  }

  private at(ref: BaseRef, version: number): Promise<Corpus> {
    const key = baseKey(ref);
    const hit = this.cache.get(key);
    if (hit && hit.version === version) {
      // Refresh recency for the LRU order.
      this.cache.delete(key);
      this.cache.set(key, hit);
      return Promise.resolve(hit);
    }
    const loadKey = `${key}@${version}`;
    const pending = this.loading.get(loadKey);
    if (pending) return pending;
    const load = this.store.livePages(ref).then((docs) => {
      const pages = docs.map(toPage).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const current = this.cache.get(key);
      const corpus = new Corpus(ref, version, pages, current && current.version < version ? current.latestIndex : null, () => this.trim());
      // A slower load of an older version never replaces a newer one.
      if (!current || current.version <= version) {
        this.cache.delete(key);
        this.cache.set(key, corpus);
        this.trim();
      }
      return corpus;
    }).finally(() => this.loading.delete(loadKey));
    this.loading.set(loadKey, load);
    return load;
  }

  /** Drops the least recently used corpora until the rest fit the budget (the latest one stays). */
  private trim(): void {
    let total = this.bytes;
    for (const [key, corpus] of this.cache) {
      if (total <= this.opts.budgetBytes || this.cache.size <= 1) break;
      this.cache.delete(key);
      total -= corpus.bytes;
    }
  }
}
