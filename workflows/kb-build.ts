import { ApplicationFailure, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { KnowledgeActivities } from '../activities/knowledge';

/**
 * One knowledge-base build (workflowId = build id): compile the uploaded
 * document into pages, then publish them with one pointer flip. Compiling
 * can be long (an LLM call per page), so the steps are regular activities
 * (a local one would hold the workflow task): the compile heartbeats, and a
 * worker killed mid-step is noticed by the missed heartbeat (or the short
 * publish timeout) and the step re-runs on another worker. Every step is
 * idempotent by the build id, so the build finishes once with no duplicate
 * or half-written pages visible.
 */
const { compileKbBuild } = proxyActivities<KnowledgeActivities>({
  // An LLM compile asks the model once per page; the heartbeat notices a dead worker.
  startToCloseTimeout: '15 minutes',
  // However it goes, a build ends: after this long it fails with the reason instead of staying `running`.
  scheduleToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 5 },
});
const { publishKbBuild } = proxyActivities<KnowledgeActivities>({
  // A compiled build's publish goes ahead of the compiles queued behind it (Temporal's priority: lower runs
  // first, 3 by default; the account's fairness key is still inherited): else, with an account's backlog
  // queued, every build of it became readable only once all its compiles had run, and the publish's
  // schedule-to-close time was spent waiting.
  priority: { priorityKey: 1 },
  // Re-resolving the links of a large base (thousands of pages) takes a while; the heartbeat notices a dead worker.
  startToCloseTimeout: '10 minutes',
  scheduleToCloseTimeout: '20 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 10 },
});
/** Recording the failure must happen: retried until it does. */
const { failKbBuild } = proxyLocalActivities<KnowledgeActivities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export interface KbBuildInput {
  buildId: string;
}

export async function kbBuildWorkflow(input: KbBuildInput): Promise<{ state: 'succeeded' | 'failed'; pages: number }> {
  let pages = 0;
  try {
    const compiled = await compileKbBuild(input);
    pages = compiled.pages;
    const published = await publishKbBuild(input);
    return { state: published.state, pages };
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause ?? err;
    const code = cause instanceof ApplicationFailure && cause.type ? cause.type : 'build_failed';
    const message = cause instanceof Error ? cause.message : String(cause);
    await failKbBuild({ buildId: input.buildId, code, message: message.slice(0, 1000) });
    return { state: 'failed', pages };
  }
}
