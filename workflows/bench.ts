/** The baseline of bench/media.ts: a workflow that starts and completes, nothing else. */
export async function benchNoopWorkflow(): Promise<string> {
  return 'ok';
}
