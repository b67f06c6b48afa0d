// The Temporal client's connection without AsyncLocalStorage (platform/temporal-connection.ts): a
// call's deadline and metadata still reach the gRPC call, and no AsyncLocalStorage context is entered
// (on Node 20 the first would turn async hooks on for the whole process, for good). Run in a child
// process of its own, so nothing of the test runner's own is counted.
import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

const SCRIPT = `
import { Client, isGrpcDeadlineError } from '@temporalio/client';
import { AsyncLocalStorage } from 'node:async_hooks';
const { lazyTemporalConnection } = await import(process.cwd() + '/platform/temporal-connection.ts');
const { Connection } = await import('@temporalio/client');
// Every AsyncLocalStorage context entered in this process, counted.
let alsRuns = 0;
for (const m of ['run', 'enterWith']) {
  const original = AsyncLocalStorage.prototype[m];
  AsyncLocalStorage.prototype[m] = function (...args) { alsRuns++; return original.apply(this, args); };
}
const hooks = () => alsRuns;
const which = process.argv.at(-1);
const connection = which === 'sdk' ? Connection.lazy({ address: process.env.TEMPORAL_ADDRESS }) : lazyTemporalConnection({ address: process.env.TEMPORAL_ADDRESS });
const client = new Client({ connection, namespace: 'default' });
const out = { before: hooks() };
// A deadline already past fails the call with DEADLINE_EXCEEDED: the deadline reached it.
try {
  await connection.withDeadline(Date.now() - 1000, () => connection.workflowService.getSystemInfo({}));
  out.pastDeadline = 'answered';
} catch (err) {
  out.pastDeadline = isGrpcDeadlineError(err) ? 'deadline' : String(err);
}
// A namespace call (withMetadata) and a readiness-style call with a live deadline.
await client.workflowService.describeNamespace({ namespace: 'default' });
await connection.withDeadline(Date.now() + 5000, () => connection.workflowService.getSystemInfo({}));
// Metadata set around a call is what the SDK's RPC implementation reads, synchronously, as it sends the call.
let seen;
const als = connection.callContextStorage;
await connection.withMetadata({ 'x-check': 'yes' }, async () => { seen = als.getStore()?.metadata?.['x-check']; });
out.metadataInScope = seen ?? null;
out.after = hooks();
await connection.close();
console.log(JSON.stringify(out));
`;

async function probe(which: 'ours' | 'sdk') {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT, which], {
    env: process.env, timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { before: number; after: number; pastDeadline: string; metadataInScope: string | null };
}

test('a Temporal call through the connection enters no AsyncLocalStorage, and still carries its deadline and metadata', async (t) => {
  if (!process.env.TEMPORAL_ADDRESS) return t.fail('TEMPORAL_ADDRESS not set: run with `npm test`');
  const ours = await probe('ours');
  t.is(ours.before, 0);
  t.is(ours.pastDeadline, 'deadline', 'a deadline set with withDeadline reaches the gRPC call');
  t.is(ours.metadataInScope, 'yes', 'metadata set with withMetadata is in scope for the call');
  t.is(ours.after, 0, 'no AsyncLocalStorage context entered by deadline, metadata and namespace calls');
});

test("the SDK's own connection does enter one: what the test above guards against", async (t) => {
  if (!process.env.TEMPORAL_ADDRESS) return t.fail('TEMPORAL_ADDRESS not set: run with `npm test`');
  const sdk = await probe('sdk');
  t.is(sdk.pastDeadline, 'deadline');
  t.true(sdk.after > 0, 'the SDK connection entered an AsyncLocalStorage context');
});
