import { Schema, type Connection, type Model } from 'mongoose';
import { docOptions, modelOn } from '../../platform/mongo';
import { BUILDS_COLLECTION, PAGES_COLLECTION } from './collections';

/**
 * Knowledge bases: the bases, their documents and builds, the compiled
 * pages, the uploaded files and the claims of team base ids.
 */

/** A knowledge base. The personal base `default` exists for every account (made on first use). */
export interface KbDoc {
  /** `{account_id}/{kb_id}`. */
  _id: string;
  account_id: string;
  kb_id: string;
  name: string;
  kind: 'personal' | 'team';
  /** Team bases: `all` members of the enterprise, or the listed user ids. Personal bases: ignored. */
  readers: 'all' | string[];
  /** Which compiler turns documents into pages (`rules` or `llm`), and the chat model for `llm`. */
  compiler: 'rules' | 'llm';
  compiler_model: string | null;
  deleted_at: Date | null;
  created_at: Date;
}

/**
 * One uploaded document of a base. Its pages are those of its live build:
 * a build writes all its pages first, then points `live_build_id` at itself,
 * so readers never see half a build.
 */
export interface KbDocumentDoc {
  _id: string;
  account_id: string;
  kb_id: string;
  filename: string;
  content_type: string;
  /** sha256 of the bytes: re-uploading the same bytes is a no-op. */
  content_hash: string;
  /** Storage key of the file (capabilities/knowledge/storage). */
  r2_key: string;
  size: number;
  live_build_id: string | null;
  /** Sequence number of the live build: a build goes live only over an older one (capabilities/knowledge/ingestion). */
  live_seq: number;
  /** Builds up to this sequence number were deleted with the document and never go live. */
  deleted_seq: number;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** One build of a document: its upload, compiled by one Temporal workflow (workflowId = build id). */
export interface KbBuildDoc {
  _id: string;
  /** `{document_id}#{seq}`, unique: claiming the next sequence number is this insert. */
  doc_seq: string;
  account_id: string;
  kb_id: string;
  document_id: string;
  seq: number;
  filename: string;
  format: 'markdown' | 'text' | 'html' | 'pdf' | 'docx';
  content_type: string;
  content_hash: string;
  r2_key: string;
  size: number;
  /** `rules`, or the chat model of the LLM compiler. */
  compiler: 'rules' | 'llm';
  model: string;
  state: 'queued' | 'running' | 'succeeded' | 'failed';
  pages_made: number;
  /** Progress of a running build: pages written so far, out of the pages the compile made (null until it has). */
  pages_done?: number;
  pages_total?: number | null;
  warnings: string[];
  error: { code: string; message: string } | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
}

/** A team base id, claimed platform-wide by this insert (team base ids are unique across accounts). */
export interface KbIdClaimDoc {
  _id: string;
  account_id: string;
  created_at: Date;
}

/** A page as stored: the spec's Page fields plus what ties it to its build. */
export interface PageDoc {
  /** `{build_id}:{page_id}`. */
  _id: string;
  /** The public, stable page id (the same across rebuilds of the same document). */
  page_id: string;
  account_id: string;
  kb_id: string;
  document_id: string;
  build_id: string;
  title: string;
  summary: string;
  tags: string[];
  aliases: string[];
  links: string[];
  body: string;
  confidence: number;
  needs_review: boolean;
  source: { r2_key: string; filename: string; locator: string; compiled_at: string; model: string };
  outgoing_links: Array<{ id: string; resolved: boolean; title: string }>;
  /** What the page asks to link to (capabilities/knowledge/compiler/links.ts); links are resolved again when the base changes. */
  link_requests?: { wiki: string[]; files: Array<{ file: string; anchor: string | null }> };
  /** Heading slug (`doc.md#anchor` targets) and order within the document. */
  anchor?: string;
  ordinal?: number;
  created_at: Date;
}

/**
 * A chunk (at most 8 MB) of an uploaded knowledge-base file
 * (capabilities/knowledge/storage/mongo-file-store.ts). `_id` is `{key}#{chunk}`; chunk 0
 * carries the metadata and is written last, so a file is whole once chunk 0
 * exists.
 */
export interface KbFileDoc {
  _id: string;
  key: string;
  chunk: number;
  chunks: number;
  content_type: string;
  filename: string;
  size: number;
  data: Buffer;
  created_at: Date;
}

const KbSchema = new Schema<KbDoc>(
  {
    _id: String, account_id: { type: String, index: true }, kb_id: String, name: String, kind: String,
    readers: { type: Schema.Types.Mixed, default: 'all' }, compiler: { type: String, default: 'rules' },
    compiler_model: { type: String, default: null }, deleted_at: { type: Date, default: null }, created_at: Date,
  },
  docOptions,
);
const KbDocumentSchema = new Schema<KbDocumentDoc>(
  {
    _id: String, account_id: String, kb_id: String, filename: String, content_type: String, content_hash: String,
    r2_key: String, size: Number, live_build_id: { type: String, default: null }, live_seq: { type: Number, default: 0 },
    deleted_seq: { type: Number, default: 0 }, deleted_at: { type: Date, default: null }, created_at: Date, updated_at: Date,
  },
  docOptions,
);
KbDocumentSchema.index({ account_id: 1, kb_id: 1 });
const PageSchema = new Schema<PageDoc>(
  {
    _id: String, page_id: { type: String, index: true }, account_id: String, kb_id: String, document_id: String,
    build_id: String, title: String, summary: String, tags: [String], aliases: [String], links: [String], body: String,
    confidence: Number, needs_review: Boolean, source: Schema.Types.Mixed, outgoing_links: Schema.Types.Mixed,
    link_requests: { type: Schema.Types.Mixed, default: undefined }, anchor: { type: String, default: '' }, ordinal: { type: Number, default: 0 },
    created_at: Date,
  },
  { ...docOptions, minimize: false },
);
PageSchema.index({ account_id: 1, kb_id: 1 });
PageSchema.index({ document_id: 1, build_id: 1 });
const KbBuildSchema = new Schema<KbBuildDoc>(
  {
    _id: String, doc_seq: { type: String, unique: true }, account_id: String, kb_id: String, document_id: { type: String, index: true },
    seq: Number, filename: String, format: String, content_type: String, content_hash: String, r2_key: String, size: Number,
    compiler: String, model: String, state: String, pages_made: { type: Number, default: 0 },
    pages_done: { type: Number, default: 0 }, pages_total: { type: Number, default: null }, warnings: { type: [String], default: [] },
    error: { type: Schema.Types.Mixed, default: null }, created_at: Date, started_at: { type: Date, default: null },
    finished_at: { type: Date, default: null }, updated_at: Date,
  },
  { ...docOptions, minimize: false },
);
/** A deleted base's builds (their stored uploads), capabilities/knowledge/publish.ts `sweepDeletedBase`. */
KbBuildSchema.index({ account_id: 1, kb_id: 1 });
const KbIdClaimSchema = new Schema<KbIdClaimDoc>({ _id: String, account_id: String, created_at: Date }, docOptions);
const KbFileSchema = new Schema<KbFileDoc>(
  { _id: String, key: String, chunk: Number, chunks: Number, content_type: String, filename: String, size: Number, data: Buffer, created_at: Date },
  docOptions,
);

export interface KnowledgeModels {
  Kb: Model<KbDoc>;
  KbDocument: Model<KbDocumentDoc>;
  Page: Model<PageDoc>;
  KbFile: Model<KbFileDoc>;
  KbBuild: Model<KbBuildDoc>;
  KbIdClaim: Model<KbIdClaimDoc>;
}

/** The collections on a connection (registered once per connection; capabilities/store.ts opens them at start). */
export function knowledgeModels(conn: Connection): KnowledgeModels {
  return {
    Kb: modelOn(conn, 'Kb', KbSchema, 'kbs'),
    KbDocument: modelOn(conn, 'KbDocument', KbDocumentSchema, 'kb_documents'),
    Page: modelOn(conn, 'Page', PageSchema, PAGES_COLLECTION),
    KbFile: modelOn(conn, 'KbFile', KbFileSchema, 'kb_files'),
    KbBuild: modelOn(conn, 'KbBuild', KbBuildSchema, BUILDS_COLLECTION),
    KbIdClaim: modelOn(conn, 'KbIdClaim', KbIdClaimSchema, 'kb_id_claims'),
  };
}

/** The knowledge bases' Redis key names. */
export const knowledgeRedisKeys = {
  /** Bumped each time a build of the base goes live or a document is removed: search indexes key on it. */
  kbVersion: (accountId: string, kbId: string) => `kbver:${accountId}/${kbId}`,
  /** Held while one step of a document or base is written (capabilities/knowledge/lock.ts): `doc:{id}`, `relink:{base}`. */
  lock: (name: string) => `kblock:${name}`,
  /** The base version the last link pass covered (capabilities/knowledge/publish.ts): a pass with nothing new to link is skipped. */
  relinked: (base: string) => `kbrelinked:${base}`,
  /** Bumped by every change that can alter who reads which bases (capabilities/knowledge/scope.ts). */
  scopeVersion: 'kbscope:version',
};
