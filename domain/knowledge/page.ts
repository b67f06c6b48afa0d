/**
 * Knowledge-base resources exactly as spec 3 section 2 names their fields.
 * A base belongs to an account: every account has its personal base
 * `default`; an enterprise account also has team bases, each readable by the
 * members it names or by all members.
 */

/** The personal base of every account. */
export const DEFAULT_KB_ID = 'default';

export interface OutgoingLink {
  /** Target page id (stable; the page may not exist yet). */
  id: string;
  resolved: boolean;
  title: string;
}

/** Where a page came from (spec 3 section 2.3 `source`). */
export interface PageSource {
  /** Storage key of the uploaded file (the name is the vendor's; any object-store key). */
  r2_key: string;
  filename: string;
  /** Page number or heading path inside the document. */
  locator: string;
  /** ISO 8601. */
  compiled_at: string;
  /** `rules` for the deterministic compiler, else the chat model id that summarised. */
  model: string;
}

/** Spec 3 section 2.3. */
export interface Page {
  id: string;
  kb_id: string;
  title: string;
  summary: string;
  tags: string[];
  aliases: string[];
  /** Ids of resolved outgoing links. */
  links: string[];
  /** Markdown. */
  body: string;
  confidence: number;
  needs_review: boolean;
  source: PageSource;
  outgoing_links: OutgoingLink[];
}

/** Spec 3 section 2.1. */
export interface SearchHit {
  id: string;
  title: string;
  summary: string;
  snippet: string;
  tags: string[];
  confidence: number;
  needs_review: boolean;
  score: number;
}

/** Spec 3 section 2.2. */
export interface SearchResponse {
  query: string;
  total_hits: number;
  offset: number;
  returned: number;
  has_more: boolean;
  results: SearchHit[];
}

/** Spec 3 section 2.4. */
export interface SourceInfo {
  r2_key: string;
  filename: string;
  locator: string;
  url: string;
  url_ttl_secs: number;
}

/** Who may read a team base: every member of its enterprise, or the named users. */
export type KbReaders = 'all' | string[];
