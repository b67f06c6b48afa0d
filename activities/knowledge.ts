import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Catalogue } from '../domain/catalogue';
import type { Db } from '../capabilities/store';
import type { KbBuildDoc } from '../capabilities/knowledge/store';
import type { RedisClient } from '../platform/redis';
import type { Logger } from '../platform/logger';
import type { UpstreamPools } from '../platform/upstream';
import type { Config } from '../platform/config';
import type { PageStore } from '../capabilities/knowledge/page-store';
import type { FileStore } from '../capabilities/knowledge/storage/file-store';
import { BuildRefused, compileBuild, failBuild, publishBuild, sweepDeletedBase } from '../capabilities/knowledge/publish';
import { LlmCompiler, RulesCompiler, type Compiler } from '../capabilities/knowledge/compiler';
import { askModelVia } from '../capabilities/knowledge/llm-chat';
import { CompileBilling } from '../capabilities/knowledge/compile-billing';
import type { Wallet } from '../capabilities/accounts/wallet';
import { threadCompute, type Compute } from '../capabilities/knowledge/compute';

export interface KnowledgeActivityDeps {
  db: Db;
  redis: RedisClient;
  log: Logger;
  pages: PageStore;
  kbFiles: FileStore;
  catalogue: () => Catalogue;
  upstream: UpstreamPools;
  wallet: Wallet;
  /** For the compiler's channel keys (platform/config.ts upstreamApiKey). */
  config: Pick<Config, 'UPSTREAM_KEYS' | 'KB_COMPILE_THREADS' | 'KB_COMPILE_THREAD_MB' | 'KB_COMPILE_THREAD_NICE' | 'MONGO_URL'>;
  /** Where compiles and link scans run; a worker-thread pool made on the first build when absent. */
  compute?: Compute;
}

/** A refusal is final (not retried); anything else (Mongo, Redis, a crash) is retried by the workflow's policy. */
function classify(err: unknown): never {
  if (err instanceof BuildRefused) throw ApplicationFailure.nonRetryable(err.message, err.code);
  // A compile thread that ran out of its heap would run out again: the build fails with the reason.
  if ((err as { code?: string })?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    throw ApplicationFailure.nonRetryable('the document needs more memory to compile than a build may use; split it into smaller files', 'too_large_to_compile');
  }
  throw err;
}

/** The steps of a knowledge-base build (capabilities/knowledge/publish.ts), each idempotent by the build id. */
export function createKnowledgeActivities(input: KnowledgeActivityDeps) {
  // The compile, tokenising and link scans run in worker threads (capabilities/knowledge/compute.ts): this event loop keeps
  // answering workflow tasks, heartbeats and the metrics listener through a build of any size.
  let pool: Compute | undefined = input.compute;
  const deps = {
    ...input,
    // The compile thread writes a new build's pages with its own client (capabilities/knowledge/build-writes.ts).
    storeUrl: input.config.MONGO_URL,
    // Each build step's wall time, at debug level (LOG_LEVEL=debug on the knowledge worker: where a build's time goes).
    timings: (phase: string, ms: number) => input.log.debug('kb build step', { phase, ms: Math.round(ms) }),
    get compute(): Compute {
      return (pool ??= threadCompute({ threads: input.config.KB_COMPILE_THREADS, heapMb: input.config.KB_COMPILE_THREAD_MB, nice: input.config.KB_COMPILE_THREAD_NICE }));
    },
  };
  const rules = new RulesCompiler();
  // LLM compiler calls are charged to the base's account (capabilities/knowledge/compile-billing.ts).
  const compilerFor = (b: KbBuildDoc): Compiler =>
    b.compiler === 'llm' ? new LlmCompiler(b.model, askModelVia(deps, b.model, new CompileBilling(deps, b.account_id, b._id))) : rules;
  return {
    async compileKbBuild(input: { buildId: string }): Promise<{ pages: number; done: boolean }> {
      const ctx = Context.current();
      // Heartbeats carry the build's progress; they keep coming while the threads compile.
      const beat = setInterval(() => ctx.heartbeat(), 2_000);
      try {
        return await compileBuild(deps, input.buildId, compilerFor).catch(classify);
      } finally {
        clearInterval(beat);
      }
    },
    async publishKbBuild(input: { buildId: string }): Promise<{ state: 'succeeded' | 'failed' }> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 2_000);
      try {
        return await publishBuild(deps, input.buildId).catch(classify);
      } finally {
        clearInterval(beat);
      }
    },
    async failKbBuild(input: { buildId: string; code: string; message: string }): Promise<void> {
      await failBuild(deps, input.buildId, { code: input.code, message: input.message });
    },
    async sweepKbBase(input: { accountId: string; kbId: string }): Promise<{ pages: number; files: number }> {
      return sweepDeletedBase(deps, { account_id: input.accountId, kb_id: input.kbId });
    },
  };
}

export type KnowledgeActivities = ReturnType<typeof createKnowledgeActivities>;
