import { createHash, randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { GatewayError, errors } from '../../domain/errors';
import { taskQueueFor } from '../../domain/task-queues';
import { ACCOUNT_ID, MODEL, TASK_ID } from '../../domain/media/search-attributes';
import type { Config } from '../../platform/config';
import { isDuplicateKey } from '../../platform/mongo';
import type { KnowledgeModels, KbBuildDoc, KbDocumentDoc } from './store';
import type { RedisClient } from '../../platform/redis';
import type { Logger } from '../../platform/logger';
import type { KbBases } from './bases';
import type { PageStore } from './page-store';
import type { FileStore } from './storage/file-store';
import { ACCEPTED, CONTENT_TYPE_OF, formatOf, looksLike } from './extract/formats';
import { RULES_MODEL } from './compiler/rules';
import { withLock } from './lock';
import { cleanupDocument, relinkAfter } from './publish';

/**
 * Loading a base: the rules of upload, build and delete, for the operator
 * API and the console alike.
 *
 * - An upload stores the file, claims the document's next build sequence
 *   number (a unique insert: atomic on FerretDB too) and starts one Temporal
 *   workflow per build (workflowId = build id), then answers at once.
 * - The same bytes as the document's latest build are a no-op answering that
 *   build; a changed file under the same name is the same document (its id
 *   comes from the base and the file name) and its new build replaces its
 *   pages when it goes live.
 * - A build goes live by one pointer flip (`KbDocument.live_build_id`), taken
 *   under a per-document lock and only over an older sequence number, so two
 *   builds of one document can finish in any order and the newest upload
 *   wins; a deleted document's older builds never go live.
 */
export const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024;
/** A build still queued after this long has lost its workflow start (a gateway died): reading it starts it again. */
const ORPHAN_AFTER_MS = 30_000;
const MAX_FILENAME = 200;

export interface UploadInput {
  filename: string;
  contentType?: string;
  data: Buffer;
}

export interface BuildView {
  id: string;
  object: 'kb.build';
  account_id: string;
  kb_id: string;
  document_id: string;
  filename: string;
  state: KbBuildDoc['state'];
  compiler: string;
  model: string;
  pages_made: number;
  /** Pages written so far out of the pages the compile made (total null until the compile is done). */
  progress: { pages_done: number; pages_total: number | null };
  live: boolean;
  warnings: string[];
  error: { code: string; message: string } | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface DocumentView {
  id: string;
  object: 'kb.document';
  kb_id: string;
  filename: string;
  content_type: string;
  size: number;
  content_hash: string;
  live_build_id: string | null;
  page_count: number;
  latest_build: { id: string; state: KbBuildDoc['state']; pages_done: number; pages_total: number | null } | null;
  created_at: number;
  updated_at: number;
}

const secs = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

export function documentIdOf(accountId: string, kbId: string, filename: string): string {
  return `doc_${createHash('sha256').update(`${accountId}/${kbId}\n${filename.normalize('NFC')}`).digest('hex').slice(0, 24)}`;
}

export interface IngestionDeps {
  config: Config;
  db: KnowledgeModels;
  redis: RedisClient;
  log: Logger;
  pages: PageStore;
  kbFiles: FileStore;
  temporal: Client;
  bases: KbBases;
}

export class KbIngestion {
  constructor(private readonly deps: IngestionDeps) {}

  /** Store the file and start its build; the same bytes again answer the existing build (`duplicate: true`). */
  async upload(accountId: string, kbId: string, input: UploadInput): Promise<{ build: KbBuildDoc; duplicate: boolean }> {
    const base = await this.deps.bases.get(accountId, kbId);
    const filename = cleanFilename(input.filename);
    if (input.data.length > MAX_DOCUMENT_BYTES) throw tooLarge();
    if (input.data.length === 0) throw errors.invalidRequest('file: the document is empty', 'file');
    const format = formatOf(filename, input.contentType);
    if (!format) throw errors.invalidRequest(`file: unsupported type of '${filename}'; accepted: ${ACCEPTED}`, 'file');
    if (!looksLike(format, input.data)) throw errors.invalidRequest(`file: '${filename}' is not a readable ${format.toUpperCase()} file`, 'file');

    const hash = createHash('sha256').update(input.data).digest('hex');
    const documentId = documentIdOf(accountId, kbId, filename);
    const now = new Date();
    await this.deps.db.KbDocument.updateOne(
      { _id: documentId },
      {
        $setOnInsert: {
          account_id: accountId, kb_id: kbId, filename, content_type: CONTENT_TYPE_OF[format], content_hash: hash, r2_key: '', size: input.data.length,
          live_build_id: null, live_seq: 0, deleted_seq: 0, deleted_at: null, created_at: now, updated_at: now,
        },
      },
      { upsert: true },
    ).catch((err) => {
      if (!isDuplicateKey(err)) throw err; // a concurrent upload made it
    });
    const r2Key = `kb/${accountId}/${kbId}/${documentId}/${hash.slice(0, 32)}`;
    let stored = false;
    for (let attempt = 0; attempt < 20; attempt++) {
      const latest = await this.latestBuild(documentId);
      const doc = (await this.deps.db.KbDocument.findById(documentId).lean<KbDocumentDoc>())!;
      const deletedSinceLatest = latest !== null && latest.seq <= doc.deleted_seq;
      if (latest && latest.content_hash === hash && latest.state !== 'failed' && !deletedSinceLatest) {
        await this.ensureStarted(latest);
        return { build: latest, duplicate: true };
      }
      if (!stored) {
        await this.deps.kbFiles.put(r2Key, { data: input.data, contentType: CONTENT_TYPE_OF[format], filename });
        stored = true;
      }
      const seq = (latest?.seq ?? 0) + 1;
      const build: KbBuildDoc = {
        _id: `build_${randomBytes(12).toString('hex')}`, doc_seq: `${documentId}#${seq}`, account_id: accountId, kb_id: kbId,
        document_id: documentId, seq, filename, format, content_type: CONTENT_TYPE_OF[format], content_hash: hash, r2_key: r2Key,
        size: input.data.length, compiler: base.compiler, model: base.compiler === 'llm' && base.compiler_model ? base.compiler_model : RULES_MODEL,
        state: 'queued', pages_made: 0, warnings: [], error: null, created_at: new Date(), started_at: null, finished_at: null, updated_at: new Date(),
      };
      try {
        await this.deps.db.KbBuild.create(build);
      } catch (err) {
        if (isDuplicateKey(err)) continue; // another upload of this document took that number: look again
        throw err;
      }
      try {
        await this.start(build);
      } catch (err) {
        await this.deps.db.KbBuild.updateOne({ _id: build._id }, { $set: { state: 'failed', error: { code: 'not_started', message: 'the build could not be started' }, finished_at: new Date(), updated_at: new Date() } });
        throw new GatewayError('internal_error', 'the build could not be started; upload the document again', { status: 503, cause: err });
      }
      return { build, duplicate: false };
    }
    throw new GatewayError('internal_error', 'too many concurrent uploads of this document; try again', { status: 503 });
  }

  /** A build of this base (404 for any other account's or base's build). */
  async getBuild(accountId: string, kbId: string, buildId: string): Promise<KbBuildDoc> {
    await this.deps.bases.get(accountId, kbId);
    const build = await this.deps.db.KbBuild.findById(buildId).lean<KbBuildDoc>();
    if (!build || build.account_id !== accountId || build.kb_id !== kbId) throw errors.notFound(`no build '${buildId}' in this knowledge base`);
    await this.ensureStarted(build);
    return build;
  }

  async listDocuments(accountId: string, kbId: string): Promise<DocumentView[]> {
    await this.deps.bases.get(accountId, kbId);
    const docs = await this.deps.db.KbDocument.find({ account_id: accountId, kb_id: kbId }).sort({ created_at: 1 }).lean<KbDocumentDoc[]>();
    const out: DocumentView[] = [];
    for (const d of docs) {
      const latest = await this.latestBuild(d._id);
      const pending = latest && latest.seq > d.deleted_seq && (latest.state === 'queued' || latest.state === 'running');
      if (d.deleted_at && !pending) continue;
      // The live build's own count (a build's pages never change but for their links): counting kb_pages would scan it.
      const liveBuild = !d.live_build_id || d.deleted_at ? null
        : latest?._id === d.live_build_id ? latest : await this.deps.db.KbBuild.findById(d.live_build_id).select({ pages_made: 1 }).lean<Pick<KbBuildDoc, 'pages_made'>>();
      const pageCount = liveBuild?.pages_made ?? 0;
      out.push({
        id: d._id, object: 'kb.document', kb_id: d.kb_id, filename: d.filename, content_type: d.content_type, size: d.size,
        content_hash: d.content_hash, live_build_id: d.deleted_at ? null : d.live_build_id, page_count: pageCount,
        latest_build: latest ? { id: latest._id, state: latest.state, ...pageProgress(latest) } : null, created_at: secs(d.created_at)!, updated_at: secs(d.updated_at)!,
      });
    }
    return out;
  }

  /** Remove a document's pages (readers stop seeing them at once) and its files; builds still running never go live. */
  async deleteDocument(accountId: string, kbId: string, documentId: string): Promise<void> {
    await this.deps.bases.get(accountId, kbId);
    const doc = await this.deps.db.KbDocument.findById(documentId).lean<KbDocumentDoc>();
    if (!doc || doc.account_id !== accountId || doc.kb_id !== kbId || doc.deleted_at) throw errors.notFound(`no document '${documentId}' in this knowledge base`);
    await withLock(this.deps.redis, `doc:${documentId}`, async () => {
      const latest = await this.latestBuild(documentId);
      await this.deps.db.KbDocument.updateOne(
        { _id: documentId },
        { $set: { deleted_at: new Date(), deleted_seq: Math.max(latest?.seq ?? 0, doc.deleted_seq), live_build_id: null, updated_at: new Date() } },
      );
    });
    const ref = { account_id: accountId, kb_id: kbId };
    await this.deps.pages.bumpVersion(ref);
    await relinkAfter(this.deps, ref, documentId);
    await cleanupDocument(this.deps, documentId);
  }

  static view(b: KbBuildDoc, live: boolean): BuildView {
    return {
      id: b._id, object: 'kb.build', account_id: b.account_id, kb_id: b.kb_id, document_id: b.document_id, filename: b.filename,
      state: b.state, compiler: b.compiler, model: b.model, pages_made: b.pages_made, progress: pageProgress(b), live, warnings: b.warnings, error: b.error,
      created_at: secs(b.created_at)!, started_at: secs(b.started_at), finished_at: secs(b.finished_at),
    };
  }

  async isLive(b: KbBuildDoc): Promise<boolean> {
    const doc = await this.deps.db.KbDocument.findById(b.document_id).select({ live_build_id: 1, deleted_at: 1 }).lean<KbDocumentDoc>();
    return !!doc && !doc.deleted_at && doc.live_build_id === b._id;
  }

  private latestBuild(documentId: string): Promise<KbBuildDoc | null> {
    return this.deps.db.KbBuild.findOne({ document_id: documentId }).sort({ seq: -1 }).lean<KbBuildDoc>();
  }

  /** The build's workflow (workflowId = build id; starting it twice is refused by Temporal, so this is idempotent). */
  private async start(build: KbBuildDoc): Promise<void> {
    try {
      await this.deps.temporal.workflow.start('kbBuildWorkflow', {
        taskQueue: taskQueueFor(this.deps.config.TEMPORAL_TASK_QUEUE, 'kbBuildWorkflow'),
        workflowId: build._id,
        args: [{ buildId: build._id }],
        // Fairness between accounts on the knowledge queue (docs/knowledge.md "Fairness"): one account's
        // hundred builds do not hold another's behind them. Its activities inherit the key.
        priority: { fairnessKey: build.account_id },
        typedSearchAttributes: [
          { key: TASK_ID, value: build._id },
          { key: ACCOUNT_ID, value: build.account_id },
          { key: MODEL, value: build.model },
        ],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  private async ensureStarted(build: KbBuildDoc): Promise<void> {
    if (build.state !== 'queued' || Date.now() - build.created_at.getTime() < ORPHAN_AFTER_MS) return;
    await this.start(build).catch((err) => this.deps.log.warn('could not restart a queued build', { build: build._id, err }));
  }
}

/** A build's pages done out of total: a finished build counts what it made. */
function pageProgress(b: KbBuildDoc): { pages_done: number; pages_total: number | null } {
  if (b.state === 'succeeded') return { pages_done: b.pages_made, pages_total: b.pages_made };
  return { pages_done: b.pages_done ?? 0, pages_total: b.pages_total ?? null };
}

/** Where the loading of a base stands: documents whose latest build ended out of all, pages written out of those known. */
export interface BaseProgress {
  documents_total: number;
  documents_done: number;
  documents_failed: number;
  pages_done: number;
  /** Pages of the documents whose compile has finished (a document still compiling adds none yet). */
  pages_total: number;
}

export function baseProgress(docs: DocumentView[]): BaseProgress {
  const out: BaseProgress = { documents_total: 0, documents_done: 0, documents_failed: 0, pages_done: 0, pages_total: 0 };
  for (const d of docs) {
    const b = d.latest_build;
    out.documents_total++;
    if (!b) continue;
    if (b.state === 'succeeded' || b.state === 'failed') out.documents_done++;
    if (b.state === 'failed') out.documents_failed++;
    if (b.state === 'failed') continue;
    out.pages_done += b.pages_done;
    out.pages_total += b.pages_total ?? 0;
  }
  return out;
}

function tooLarge() {
  return new GatewayError('invalid_request', `file: documents are limited to ${MAX_DOCUMENT_BYTES / 1024 / 1024} MB`, { status: 413, param: 'file' });
}

/** The file's own name: no directories, no control characters, at most 200 characters. */
function cleanFilename(name: string): string {
  const base = name.split(/[\\/]/).pop()!.trim();
  if (!base || base === '.' || base === '../..') throw errors.invalidRequest('filename: a file name is required', 'filename');
  if (/[\u0000-\u001f\u007f]/.test(base)) throw errors.invalidRequest('filename: control characters are not allowed', 'filename');
  if ([...base].length > MAX_FILENAME) throw errors.invalidRequest(`filename: at most ${MAX_FILENAME} characters`, 'filename');
  return base.normalize('NFC');
}
