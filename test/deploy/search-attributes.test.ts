import test from 'ava';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { ensureTools, temporalBinary } from '../../dev/scripts/lib/tools';
import { freePort, spawnManaged, type Managed } from '../../dev/scripts/lib/proc';
import { ensureSearchAttributes, type SearchAttributeOperator } from '../../platform/temporal-search-attributes';
import { SEARCH_ATTRIBUTE_KEYS, TASK_ID, ACCOUNT_ID, MODEL } from '../../domain/media/search-attributes';

/**
 * A fresh Temporal namespace (a dev server of this test's own, started with no search attribute, as the chart's
 * Temporal or a new namespace is) refuses a workflow started with TaskId, AccountId and Model, as every media task and
 * knowledge build is; the worker's start-up registration (workers/main.ts) adds the missing ones through the operator
 * service, and then the start is accepted. Run again it adds nothing. A server that refuses to add them gets one
 * warning naming them and the command that registers them, and the worker goes on.
 */
let server: Managed | undefined;
let address = '';

test.before(async () => {
  await ensureTools({ need: { temporal: true, ferretdb: false, redis: false }, log: () => undefined });
  const port = await freePort();
  address = `127.0.0.1:${port}`;
  server = spawnManaged({
    name: 'temporal-fresh', cmd: temporalBinary(),
    args: ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless', '--namespace', 'default',
      '--log-level', 'error', '--disable-config-file', '--disable-config-env'],
    logFile: path.join(os.tmpdir(), `temporal-fresh-${port}.log`),
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const c = await Connection.connect({ address, connectTimeout: 1000 });
      await c.workflowService.describeNamespace({ namespace: 'default' });
      await c.close();
      return;
    } catch (err) {
      if (Date.now() > deadline || server.done()) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
});

test.after.always(async () => {
  await server?.stop();
});

function recorder() {
  const lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  return {
    lines,
    info: (msg: string, fields?: Record<string, unknown>) => void lines.push({ level: 'info', msg, fields }),
    warn: (msg: string, fields?: Record<string, unknown>) => void lines.push({ level: 'warn', msg, fields }),
  };
}

const startTagged = (client: Client, id: string) =>
  client.workflow.start('mediaTaskWorkflow', {
    taskQueue: 'nobody-polls', workflowId: id, args: [],
    typedSearchAttributes: [{ key: TASK_ID, value: id }, { key: ACCOUNT_ID, value: 'acct' }, { key: MODEL, value: 'gpt-image-1' }],
  });

test.serial('a fresh namespace refuses a tagged start until the worker registers the attributes; a second run adds nothing', async (t) => {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  const before = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
  t.false('TaskId' in (before.customAttributes ?? {}), 'the server starts without them');
  await t.throwsAsync(startTagged(client, `before-${Date.now()}`), undefined, 'the bug: every media task start fails');

  // What workers/main.ts does, through the worker's own (native) connection.
  const native = await NativeConnection.connect({ address });
  try {
    const log = recorder();
    const first = await ensureSearchAttributes(native.operatorService, 'default', log);
    t.deepEqual(first.added.sort(), SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).sort());
    t.deepEqual(first.missing, []);
    t.false(log.lines.some((l) => l.level === 'warn'), JSON.stringify(log.lines));
    const after = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    for (const k of SEARCH_ATTRIBUTE_KEYS) t.is(after.customAttributes?.[k.name], 2, `${k.name} is a Keyword`);

    const again = recorder();
    t.deepEqual(await ensureSearchAttributes(native.operatorService, 'default', again), { added: [], missing: [] });
    t.deepEqual(again.lines, [], 'idempotent: nothing added, nothing logged');
  } finally {
    await native.close();
  }
  // The namespace's registry may take a moment to see them on every frontend path: the start is accepted within seconds.
  const id = `after-${Date.now()}`;
  let started = false;
  for (let i = 0; i < 40 && !started; i++) {
    try {
      await startTagged(client, id);
      started = true;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  t.true(started, 'a tagged start is accepted once they are registered');
  await client.workflow.getHandle(id).terminate('test done').catch(() => undefined);
  await connection.close();
});

test('a server that refuses to add them (Temporal Cloud): one warning naming each and how to register it, and the worker goes on', async (t) => {
  const operator: SearchAttributeOperator = {
    listSearchAttributes: async () => ({ customAttributes: { TaskId: 2 }, systemAttributes: {} }),
    addSearchAttributes: async () => {
      throw Object.assign(new Error('7 PERMISSION_DENIED: Request unauthorized.'), { code: 7, details: 'Request unauthorized.' });
    },
  };
  const log = recorder();
  const outcome = await ensureSearchAttributes(operator, 'prod.a1b2c', log);
  t.deepEqual(outcome, { added: [], missing: ['AccountId', 'Model'] });
  t.is(log.lines.length, 1);
  t.is(log.lines[0].level, 'warn');
  t.regex(log.lines[0].msg, /Request unauthorized/);
  t.regex(log.lines[0].msg, /register AccountId, Model in namespace prod\.a1b2c/);
  t.regex(log.lines[0].msg, /temporal operator search-attribute create --namespace prod\.a1b2c --name AccountId --type Keyword/);
  t.notRegex(log.lines[0].msg, /--name TaskId/, 'only the missing ones');

  // Listing refused too (an API key without the permission): still one warning, still no throw.
  const blind = recorder();
  const refused: SearchAttributeOperator = { ...operator, listSearchAttributes: async () => { throw new Error('7 PERMISSION_DENIED: nope'); } };
  t.deepEqual((await ensureSearchAttributes(refused, 'ns', blind)).missing, ['TaskId', 'AccountId', 'Model']);
  t.is(blind.lines.length, 1);
  t.regex(blind.lines[0].msg, /TaskId \(Keyword\), AccountId \(Keyword\), Model \(Keyword\)/);
});

test('two workers starting at once: the one whose add loses the race reads the list again and is content', async (t) => {
  let listed = 0;
  const operator: SearchAttributeOperator = {
    listSearchAttributes: async () => (listed++ === 0 ? { customAttributes: {} } : { customAttributes: { TaskId: 2, AccountId: 2, Model: 2 } }),
    addSearchAttributes: async () => {
      throw Object.assign(new Error('6 ALREADY_EXISTS: Search attribute TaskId already exists.'), { details: 'Search attribute TaskId already exists.' });
    },
  };
  const log = recorder();
  t.deepEqual((await ensureSearchAttributes(operator, 'default', log)).missing, []);
  t.false(log.lines.some((l) => l.level === 'warn'));
});
