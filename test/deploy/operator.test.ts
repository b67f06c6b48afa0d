import test from 'ava';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { startGateway, type TestGateway } from '../helpers/stack';
import { auditWalletWorkflow } from '../../workflows';

/** What a new operator walking through the docs ran into (issue 24, item 8), as they would meet it. */
const run = promisify(execFile);
let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { worker: true });
});
test.after.always(async () => gw?.close());

async function pages(path: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after: string | null = null;
  let n = 0;
  do {
    const r: { status: number; body: any } = await gw.admin('GET', `${path}?limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
    ids.push(...r.body.data.map((d: { id: string }) => d.id));
    after = r.body.next_cursor;
    n++;
  } while (after && n < 100);
  return { ids, pages: n };
}

test('GET /admin/v1/accounts pages through every account once', async (t) => {
  const made = await Promise.all(Array.from({ length: 5 }, (_, i) => gw.newAccount({ name: `list-${i}` })));
  const { ids, pages: n } = await pages('/accounts', 2);
  for (const a of made) t.true(ids.includes(a.id));
  t.is(new Set(ids).size, ids.length, 'no account twice');
  t.true(n >= 3);
  const one = await gw.admin('GET', '/accounts?limit=1');
  t.is(one.body.object, 'list');
  t.truthy(one.body.data[0].balance_usd);
  t.is((await gw.admin('GET', '/accounts?limit=0')).status, 400);
});

test('GET /admin/v1/users pages through every user once', async (t) => {
  const made = await Promise.all(Array.from({ length: 3 }, (_, i) => gw.admin('POST', '/users', { email: `list-${i}-${Date.now()}@example.com`, name: `User ${i}` })));
  const { ids } = await pages('/users', 2);
  for (const u of made) t.true(ids.includes(u.body.id));
  t.is(new Set(ids).size, ids.length);
  const res = await fetch(`${gw.url}/admin/v1/users`);
  t.is(res.status, 401, 'operators only');
});

test('the wallet audit of an account that does not exist says "no such account"', async (t) => {
  const connection = await Connection.connect({ address: gw.config.TEMPORAL_ADDRESS });
  try {
    const client = new Client({ connection, namespace: gw.config.TEMPORAL_NAMESPACE });
    const err = await t.throwsAsync(client.workflow.execute(auditWalletWorkflow, { taskQueue: gw.config.TEMPORAL_TASK_QUEUE, workflowId: `audit-none-${Date.now()}`, args: [{ accountId: 'acct_does_not_exist', repair: true }] }));
    t.true(err instanceof WorkflowFailedError);
    // The workflow failed because its activity did: the activity's failure carries the reason.
    const messages: string[] = [];
    for (let e: Error | undefined = err; e; e = (e as Error & { cause?: Error }).cause) messages.push(e.message);
    t.true(messages.some((m) => /no such account: acct_does_not_exist/.test(m)), messages.join(' <- '));
  } finally {
    await connection.close();
  }
});

test('a gateway without ADMIN_TOKEN names the variable, with no stack trace', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, KEY_ENCRYPTION_KEY: gw.config.KEY_ENCRYPTION_KEY, PORT: '0' };
  delete env.ADMIN_TOKEN;
  const err = await t.throwsAsync(run(process.execPath, ['--import', 'tsx', 'gateway/server.ts'], { env })) as Error & { code: number; stderr: string };
  t.is(err.code, 1);
  t.regex(err.stderr, /ADMIN_TOKEN is not set/);
  t.notRegex(err.stderr, /\n\s+at /, 'no stack trace');
  t.notRegex(err.stderr, /ZodError|invalid_type/);
});

test('npm run seed against an unreachable store fails, naming the URL', async (t) => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  const url = `mongodb://127.0.0.1:${port}/nowhere`;
  const err = await t.throwsAsync(run(process.execPath, ['--import', 'tsx', 'dev/scripts/seed.ts'], { env: { ...process.env, MONGO_URL: url }, timeout: 60_000 })) as Error & { code: number; stderr: string; killed: boolean };
  t.false(err.killed, 'it ended by itself');
  t.is(err.code, 1);
  t.true(err.stderr.includes(`MONGO_URL=${url}`), err.stderr);
  t.regex(err.stderr, /did not answer within 8 s/);
});
