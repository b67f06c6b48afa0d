import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { forNode } from '../../dev/scripts/lib/node-flags';

/**
 * The container's entry point (dev/scripts/docker-entrypoint.sh) hands node the flags of
 * gateway/node-flags, then GATEWAY_HEAP_MB's old-generation cap when given (the chart's gateway.heapMB),
 * after them so it wins over any cap there. A `node` first on PATH prints what it was given instead of running anything
 * (asked for its version, it says FAKE_NODE_MAJOR, 24 unless set).
 */
const run = promisify(execFile);
const ENTRY = path.resolve('dev/scripts/docker-entrypoint.sh');

async function nodeArgs(args: string[], env: Record<string, string> = {}): Promise<string[]> {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'entry-'));
  try {
    fs.writeFileSync(path.join(bin, 'node'), '#!/bin/sh\nif [ "$1" = -p ]; then echo "${FAKE_NODE_MAJOR:-24}"; exit 0; fi\nfor a in "$@"; do echo "$a"; done\n', { mode: 0o755 });
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_') && k !== 'GATEWAY_HEAP_MB' && k !== 'NODE_MAJOR'));
    const { stdout } = await run('bash', [ENTRY, ...args], { env: { ...clean, ...env, PATH: `${bin}:${process.env.PATH}` } });
    return stdout.split('\n').filter(Boolean);
  } finally {
    fs.rmSync(bin, { recursive: true, force: true });
  }
}

const heapFlags = (argv: string[]) => argv.filter((a) => a.startsWith('--max-old-space-size='));
/** gateway/node-flags as the given Node major gets them. */
const gatewayFlags = (major = 24) => forNode(fs.readFileSync('gateway/node-flags', 'utf8'), major);

test('the gateway starts with gateway/node-flags and no heap cap of its own', async (t) => {
  const argv = await nodeArgs(['gateway']);
  t.deepEqual(argv, [...gatewayFlags(24), 'dist/gateway.mjs']);
  t.deepEqual(heapFlags(argv), []);
});

test('a flag marked node<22: goes to Node 20 only (--single-threaded-gc doubles Node 24\'s peak RSS)', async (t) => {
  t.deepEqual(forNode('--a=1 node<22:--b --c', 20), ['--a=1', '--b', '--c']);
  t.deepEqual(forNode('--a=1 node<22:--b --c', 22), ['--a=1', '--c']);
  t.true(gatewayFlags(20).includes('--single-threaded-gc'));
  t.false(gatewayFlags(24).includes('--single-threaded-gc'));
  t.false(gatewayFlags(24).some((f) => f.startsWith('node<')));
  // The entry point applies the same rule, asking node for its version (or taking NODE_MAJOR).
  t.deepEqual(await nodeArgs(['gateway'], { FAKE_NODE_MAJOR: '20' }), [...gatewayFlags(20), 'dist/gateway.mjs']);
  t.deepEqual(await nodeArgs(['gateway'], { NODE_MAJOR: '20' }), [...gatewayFlags(20), 'dist/gateway.mjs']);
  t.deepEqual(await nodeArgs(['gateway'], { FAKE_NODE_MAJOR: '24' }), [...gatewayFlags(24), 'dist/gateway.mjs']);
});

test('GATEWAY_HEAP_MB comes after node-flags, so its cap is the one node keeps', async (t) => {
  const argv = await nodeArgs(['gateway'], { GATEWAY_HEAP_MB: '1536' });
  t.deepEqual(heapFlags(argv), ['--max-old-space-size=1536']);
  t.deepEqual(argv.slice(0, -2), gatewayFlags(24));
  t.is(argv.at(-1), 'dist/gateway.mjs');
  // Node itself: of two caps, the later wins (a cap in node-flags is overridden the same way).
  const { stdout } = await run(process.execPath, ['--max-old-space-size=640', '--max-old-space-size=1536', '-p', "require('v8').getHeapStatistics().heap_size_limit / 2 ** 20"]);
  t.true(Number(stdout) > 1536, `heap limit ${stdout.trim()} MB`);
});

test('a GATEWAY_HEAP_MB that is not a whole number of MB stops the container with a message', async (t) => {
  for (const bad of ['1.5g', '0', '5', 'lots', '-1']) {
    const err = await t.throwsAsync(nodeArgs(['gateway'], { GATEWAY_HEAP_MB: bad }));
    t.regex((err as Error & { stderr: string }).stderr, /GATEWAY_HEAP_MB: a whole number of MB/, bad);
  }
});

test('workers are not given the gateway cap', async (t) => {
  const argv = await nodeArgs(['worker'], { GATEWAY_HEAP_MB: '1536' });
  t.deepEqual(heapFlags(argv), []);
  t.is(argv.at(-1), 'dist/worker.mjs');
});

test('worker --queue=X (and --queue X) reaches the worker: workers/main.ts reads the flag, as `npm run worker -- --queue=X` does', async (t) => {
  const flags = forNode(fs.readFileSync('workers/node-flags', 'utf8'), 24);
  t.deepEqual(await nodeArgs(['worker', '--queue=knowledge']), [...flags, 'dist/worker.mjs', '--queue=knowledge']);
  t.deepEqual(await nodeArgs(['worker', '--queue', 'webhooks']), [...flags, 'dist/worker.mjs', '--queue', 'webhooks']);
  t.deepEqual(await nodeArgs(['worker']), [...flags, 'dist/worker.mjs'], 'no flag: WORKER_QUEUE, else media');
  // With tracing on, from source under the tracing preload: the flag still follows the entry.
  const traced = await nodeArgs(['worker', '--queue=knowledge'], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' });
  t.deepEqual(traced.slice(-2), ['workers/main.ts', '--queue=knowledge']);
  t.deepEqual(traced.slice(0, flags.length), flags);
  t.true(traced.includes('./platform/tracing/register.ts'));
  const tracedGateway = await nodeArgs(['gateway'], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' });
  t.is(tracedGateway.at(-1), 'gateway/server.ts');
  t.deepEqual(tracedGateway.slice(0, gatewayFlags(24).length), gatewayFlags(24));
});
