import { Context } from '@temporalio/activity';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../capabilities/store';
import { isDuplicateKey } from '../platform/mongo';
import { BatchInserter } from '../platform/batch-insert';
import type { Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import type { KeyService } from '../capabilities/accounts/keys';
import type { AccountService } from '../capabilities/accounts/accounts';
import { parseCredits } from '../domain/money';
import { batchModels, lineId, type BatchDoc, type BatchFileDoc, type BatchLineDoc } from '../capabilities/batches/store';
import { ALL_BATCH_ENDPOINTS, parseOpenAiLines, type LineInput } from '../capabilities/batches/schemas';
import { BATCH_LINE_HEADER, signLine } from '../capabilities/batches/line-auth';
import { counts, recordedLines, reportSlice, tally } from '../capabilities/batches/progress';
import { batchOutcomes, releaseInput, resultFileBytes } from '../capabilities/batches/service';

export interface BatchActivityDeps {
  db: Db;
  config: Config;
  log: Logger;
  keys: KeyService;
  accounts: AccountService;
}

/** How long one line may take at the gateway (its own deadline is CHAT_UPSTREAM_TIMEOUT_MS). */
const LINE_TIMEOUT_MARGIN_MS = 30_000;
/**
 * The account's own rate limit (a 429 with Retry-After or x-ratelimit-* headers, spec 1 section 7): the line
 * waits and is sent again, as long as the batch runs. A 429 without them is the upstream's limit (the gateway
 * already retried it on its channels): sent again a few times, then it is the line's outcome, so a model
 * that stays rate limited upstream cannot hold a batch (and its cancel) for ever.
 */
const isPlatformLimit = (res: Response) => res.status === 429 && (res.headers.has('retry-after') || res.headers.has('x-ratelimit-limit-requests') || res.headers.has('x-ratelimit-limit-concurrency'));
const UPSTREAM_LIMIT_TRIES = 4;
/** Gateway unreachable (a deploy swap): the line is sent again after a pause, up to this many times, then the slice fails and Temporal retries it. */
const CONNECT_TRIES = 20;
/** How often a running slice writes its counts so far (request_counts as lines finish). */
const PROGRESS_EVERY_MS = 1_000;

/** One parsed input file per batch, for the slices of this process (bounded). */
const parsed = new Map<string, LineInput[]>();

export function createBatchActivities(deps: BatchActivityDeps) {
  const store = batchModels(deps.db.conn);
  const outcomes = new BatchInserter<BatchLineDoc>(() => store.Line.collection as never);
  const gatewayUrl = (deps.config.GATEWAY_INTERNAL_URL ?? `http://127.0.0.1:${deps.config.PORT}`).replace(/\/+$/, '');

  const batchOf = async (batchId: string) => {
    const b = await store.Batch.findById(batchId).lean<BatchDoc>();
    if (!b) throw new Error(`batch ${batchId} not found`);
    return b;
  };
  const linesOf = async (b: BatchDoc): Promise<LineInput[]> => {
    let lines = parsed.get(b._id);
    if (!lines) {
      const file = await store.File.findById(b.input_file_id).lean<BatchFileDoc>();
      lines = parseOpenAiLines(file?.content ?? '', ALL_BATCH_ENDPOINTS);
      if (parsed.size > 32) parsed.clear();
      parsed.set(b._id, lines);
    }
    return lines;
  };
  const stopping = (b: BatchDoc) => b.status === 'cancelling' || b.status === 'cancelled' || b.expires_at.getTime() < Date.now();

  /**
   * Send one line to the gateway as a live call; the answer (any status) is its outcome. null: the batch was
   * cancelled or passed its window while the line waited out a rate limit (it did not run, and was not charged).
   */
  async function send(b: BatchDoc, index: number, line: LineInput, key: string): Promise<Omit<BatchLineDoc, '_id' | 'created_at'> | null> {
    const body: Record<string, unknown> = { ...line.body, stream: false };
    delete body.stream_options;
    const headers: Record<string, string> = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      [BATCH_LINE_HEADER]: signLine(deps.config.KEY_ENCRYPTION_KEY, b._id, index, b.key_id),
    };
    if (line.url === '/v1/messages') headers['anthropic-version'] = '2023-06-01';
    for (let tries = 0, upstreamLimited = 0; ; tries++) {
      let res: Response;
      try {
        res = await fetch(gatewayUrl + line.url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(deps.config.CHAT_UPSTREAM_TIMEOUT_MS + LINE_TIMEOUT_MARGIN_MS) });
      } catch (err) {
        if (tries >= CONNECT_TRIES) throw err;
        await sleep(Math.min(5_000, 250 * 2 ** Math.min(tries, 5)));
        continue;
      }
      const text = await res.text();
      // The account's rate limit, or the store briefly away (500 with Retry-After): wait and send again; not the line's outcome.
      const upstreamLimit = res.status === 429 && !isPlatformLimit(res) && ++upstreamLimited < UPSTREAM_LIMIT_TRIES;
      if (isPlatformLimit(res) || upstreamLimit || (res.status >= 500 && res.headers.get('retry-after'))) {
        const after = upstreamLimit ? 2 ** (upstreamLimited - 1) : Number(res.headers.get('retry-after') ?? 1);
        await sleep(Math.min(10_000, Math.max(100, (Number.isFinite(after) ? after : 1) * 1000)));
        // A cancel (or the window's end) stops a line that is waiting, not only the lines not yet taken.
        if (stopping(await batchOf(b._id))) return null;
        continue;
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = { error: { message: text.slice(0, 1000), type: 'api_error' } };
      }
      const cost = res.headers.get('x-gateway-cost');
      return {
        batch_id: b._id, index, custom_id: line.custom_id, status_code: res.status, request_id: res.headers.get('x-gateway-trace'), body: json,
        cost_nano: cost ? parseCredits(cost) : 0,
      };
    }
  }

  return {
    /** The batch is in progress; how many lines it has. */
    async startBatch(input: { batchId: string }): Promise<{ total: number }> {
      const b = await batchOf(input.batchId);
      if (b.status === 'validating') await store.Batch.updateOne({ _id: b._id, status: 'validating' }, { $set: { status: 'in_progress', in_progress_at: new Date() } });
      return { total: b.total };
    },

    /**
     * Lines [from, to) that have no outcome yet, at most N at a time (BATCH_LINE_CONCURRENCY, and never
     * more than the account's concurrency limit). Stops taking new lines once the batch is cancelled
     * or past its window; lines already sent finish and are recorded (and were billed by the gateway).
     */
    async runBatchLines(input: { batchId: string; from: number; to: number }): Promise<{ stopped: boolean }> {
      const ctx = Context.current();
      let b = await batchOf(input.batchId);
      if (stopping(b)) return { stopped: true };
      const lines = await linesOf(b);
      // The slice's lines that already have an outcome (a retried slice): skipped, and counted in its progress.
      const recorded = await recordedLines(store, b._id, input.from, input.to);
      const done = new Set(recorded.map((d) => d.index));
      const todo: number[] = [];
      for (let i = input.from; i < input.to; i++) if (!done.has(i)) todo.push(i);
      if (todo.length === 0) {
        await reportSlice(store, b, input.from, tally(recorded));
        return { stopped: false };
      }
      let key: string;
      try {
        key = await deps.keys.reveal(b.key_id);
      } catch (err) {
        // The key is gone (deleted, hash-only): every line left fails with the gateway's answer to a bad key.
        deps.log.warn('batch key not usable', { batch: b._id, err });
        key = 'sk-revoked';
      }
      const account = await deps.accounts.get(b.account_id).catch(() => null);
      const limit = Math.max(1, Math.min(deps.config.BATCH_LINE_CONCURRENCY, account?.rate_limit?.concurrency ?? Infinity));

      let stop = false;
      let checkedAt = Date.now();
      // Progress as lines finish, not only as slices end (a batch of one slice would read 0 until its end):
      // the slice's counts so far, at most once a second, one write at a time (the last one is awaited
      // before the slice's final report, which it must not overwrite).
      let reportedAt = Date.now();
      let reporting: Promise<unknown> = Promise.resolve();
      let inReport = false;
      const reportProgress = () => {
        if (inReport || Date.now() - reportedAt < PROGRESS_EVERY_MS) return;
        inReport = true;
        reportedAt = Date.now();
        reporting = reportSlice(store, b, input.from, tally(recorded))
          .catch((err: unknown) => deps.log.warn('batch progress not written', { batch: b._id, err }))
          .finally(() => (inReport = false));
      };
      const heartbeat = setInterval(() => ctx.heartbeat(), 2_000);
      try {
        let next = 0;
        const lane = async () => {
          while (!stop && next < todo.length) {
            // The batch's status is read again every second: a cancel stops new lines within about a second.
            if (Date.now() - checkedAt > 1_000) {
              checkedAt = Date.now();
              b = await batchOf(b._id);
              if (stopping(b)) {
                stop = true;
                break;
              }
            }
            // Another lane may have taken the last line while this one read the status.
            if (next >= todo.length) break;
            const index = todo[next++];
            const outcome = await send(b, index, lines[index], key);
            if (!outcome) {
              stop = true;
              break;
            }
            // Group commit: the lanes' outcomes go in one insertMany (each lane awaits its own; a duplicate is a success).
            await outcomes.insert({ _id: lineId(b._id, index), ...outcome, created_at: new Date() });
            recorded.push(outcome);
            ctx.heartbeat();
            reportProgress();
          }
        };
        await Promise.all(Array.from({ length: Math.min(limit, todo.length) }, lane));
      } finally {
        clearInterval(heartbeat);
        await reporting;
      }
      // Progress: the slice's final counts.
      await reportSlice(store, b, input.from, tally(recorded));
      return { stopped: stop };
    },

    /** Final status, counts, charge and output files of the batch. */
    async finishBatch(input: { batchId: string; failed?: boolean }): Promise<{ status: string }> {
      const b = await batchOf(input.batchId);
      if (['completed', 'failed', 'expired', 'cancelled'].includes(b.status)) {
        await releaseInput(store, b.input_file_id); // a retry of an end that stopped before it
        return { status: b.status };
      }
      const c = await counts(store, b._id);
      const now = new Date();
      const ran = c.completed + c.failed;
      const status = b.status === 'cancelling' ? 'cancelled' : ran < b.total && b.expires_at.getTime() < now.getTime() ? 'expired' : input.failed ? 'failed' : 'completed';
      const files: Record<string, string | null> = { output_file_id: null, error_file_id: null };
      if (c.completed > 0) files.output_file_id = `file-${b._id}-output`;
      if (c.failed > 0 || ran < b.total) files.error_file_id = `file-${b._id}-error`;
      // The files' sizes (their text follows from the lines and the final status) are written with the files,
      // before the batch reads final: a file's metadata then reads them instead of building the file (3.3 s
      // at 10,000 lines), and a client that sees the batch final never sees a size of 0. A retry that finds
      // the batch final skips this; such a file keeps what it had.
      const made = (['output', 'error'] as const).filter((role) => files[`${role}_file_id`]);
      const out = made.length > 0 ? await batchOutcomes(store, b) : [];
      const final = { ...b, status } as typeof b;
      for (const role of made) {
        const bytes = resultFileBytes(final, role, out);
        const doc = {
          _id: files[`${role}_file_id`]!, account_id: b.account_id, key_id: b.key_id, purpose: 'batch_output', filename: `${b._id}_${role}.jsonl`, bytes,
          content: null, batch_id: b._id, role, created_at: now, expires_at: new Date(now.getTime() + 30 * 24 * 3600 * 1000), deleted_at: null,
        };
        await store.File.collection.insertOne(doc as never).catch(async (err: unknown) => {
          if (!isDuplicateKey(err)) throw err;
          await store.File.updateOne({ _id: doc._id }, { $set: { bytes } });
        });
      }
      await store.Batch.updateOne({ _id: b._id }, {
        $set: {
          status, completed: c.completed, failed: c.failed, cost_nano: c.costNano, ...files, finalizing_at: b.finalizing_at ?? now,
          ...(status === 'cancelled' ? { cancelled_at: now, completed_at: now } : status === 'expired' ? { expired_at: now, completed_at: now } : { completed_at: now }),
        },
      });
      // An input the account deleted while the batch ran was kept for it: erased now if no other batch needs it.
      await releaseInput(store, b.input_file_id);
      return { status };
    },
  };
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
