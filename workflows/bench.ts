/** The baseline of dev/bench/media.ts: a workflow that starts and completes, nothing else. */
export async function benchNoopWorkflow(): Promise<string> {
  return 'ok';
}
