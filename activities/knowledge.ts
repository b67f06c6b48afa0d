import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Catalogue } from '../domain/catalogue';
import type { Db, KbBuildDoc } from '../infra/mongo';
import type { RedisClient } from '../infra/redis';
import type { Logger } from '../infra/logger';
import type { UpstreamPools } from '../infra/upstream';
import type { Config } from '../infra/config';
import type { PageStore } from '../knowledge/page-store';
import type { FileStore } from '../knowledge/storage/file-store';
import { BuildRefused, compileBuild, failBuild, publishBuild, sweepDeletedBase } from '../knowledge/publish';
import { LlmCompiler, RulesCompiler, type Compiler } from '../knowledge/compiler';
import { askModelVia } from '../knowledge/llm-chat';
import { CompileBilling } from '../knowledge/compile-billing';
import type { Wallet } from '../services/wallet';

export interface KnowledgeActivityDeps {
  db: Db;
  redis: RedisClient;
  log: Logger;
  pages: PageStore;
  kbFiles: FileStore;
  catalogue: () => Catalogue;
  upstream: UpstreamPools;
  wallet: Wallet;
  /** For the compiler's channel keys (infra/config.ts upstreamApiKey). */
  config: Pick<Config, 'UPSTREAM_KEYS'>;
}

/** A refusal is final (not retried); anything else (Mongo, Redis, a crash) is retried by the workflow's policy. */
function classify(err: unknown): never {
  if (err instanceof BuildRefused) throw ApplicationFailure.nonRetryable(err.message, err.code);
  throw err;
}

/** The steps of a knowledge-base build (knowledge/publish.ts), each idempotent by the build id. */
export function createKnowledgeActivities(deps: KnowledgeActivityDeps) {
  const rules = new RulesCompiler();
  // LLM compiler calls are charged to the base's account (knowledge/compile-billing.ts).
  const compilerFor = (b: KbBuildDoc): Compiler =>
    b.compiler === 'llm' ? new LlmCompiler(b.model, askModelVia(deps, b.model, new CompileBilling(deps, b.account_id, b._id))) : rules;
  return {
    async compileKbBuild(input: { buildId: string }): Promise<{ pages: number; done: boolean }> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 2_000);
      try {
        return await compileBuild(deps, input.buildId, compilerFor).catch(classify);
      } finally {
        clearInterval(beat);
      }
    },
    async publishKbBuild(input: { buildId: string }): Promise<{ state: 'succeeded' | 'failed' }> {
      return publishBuild(deps, input.buildId).catch(classify);
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
