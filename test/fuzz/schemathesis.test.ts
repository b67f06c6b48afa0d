import test from 'ava';
import { ensureSchemathesis } from '../../dev/scripts/lib/schemathesis';
import { startGateway, type TestGateway } from '../helpers/stack';
import { runSchemathesis } from './schemathesis-run';

/**
 * Schemathesis against the whole API, from the gateway's own /openapi.json:
 * no 5xx (but the 503 no_channel_available spec 1 section 4.10 prescribes),
 * every error in its endpoint family's shape, x-gateway-trace on every
 * answer, the documented schemas and statuses, 405 with Allow for other
 * methods, and the gateway healthy afterwards. A bounded run in `npm test`
 * (FUZZ_SECONDS, default 75); `npm run fuzz` runs it for 10 minutes.
 * FUZZ_SEED replays a run; FUZZ_PATHS (a regular expression) fuzzes only
 * the matching paths. Docs: docs/fuzzing.md.
 */

const SECONDS = Number(process.env.FUZZ_SECONDS ?? 75);
const EXAMPLES = Number(process.env.FUZZ_EXAMPLES ?? (SECONDS > 120 ? 100 : 8));

let gw: TestGateway;
let apiKey: string;

test.before(async () => {
  // A simulator for the upstreams and a worker, so synchronous media calls (images, speech, voices, transcripts) finish.
  // Errors only: an unhandled exception behind a 500 is printed with its stack.
  gw = await startGateway({ LOG_LEVEL: 'error' }, { simulator: true, worker: true, mediaDelayMs: 0 });
  const account = await gw.newAccount({ name: 'fuzz' });
  // Enough credit that the fuzzer's charges never turn answers into 402s.
  const top = await gw.admin('POST', `/accounts/${account.id}/topups`, { amount_usd: '1000000' });
  if (top.status !== 201) throw new Error(`top-up failed: ${JSON.stringify(top.body)}`);
  apiKey = (await gw.newKey(account.id)).key;
});

test.after.always(async () => {
  await gw?.close();
});

test('schemathesis finds no 5xx, no error outside its shape, no answer without x-gateway-trace', async (t) => {
  t.timeout((SECONDS + 600) * 1000);
  const st = await ensureSchemathesis((line) => t.log(line));
  const result = await runSchemathesis({
    st, baseUrl: gw.url, apiKey, adminToken: gw.config.ADMIN_TOKEN,
    maxSeconds: SECONDS, maxExamples: EXAMPLES, workers: 2, seed: process.env.FUZZ_SEED, includePath: process.env.FUZZ_PATHS,
    log: (line) => console.log(line),
  });
  const figures = `${result.operations} operations, ${result.testCases} test cases, ${result.requests} requests ` +
    `(${Object.entries(result.statuses).sort().map(([k, v]) => `${k} ${v}`).join(', ')}; 503 no_channel_available ${result.noChannel503}), ` +
    `${result.failures.length} failures, seed ${result.seed}, stopped by ${result.stopReason || 'completion'}`;
  console.log(`  fuzz: ${figures}`);
  t.log(figures);
  for (const e of result.toolErrors) t.log(`schemathesis-side error (not an answer of the gateway): ${e.slice(0, 300)}`);
  for (const f of result.failures) t.log(`${f.operation} ${f.check}: ${f.title}\n${f.message}${f.reproduce ? `\n${f.reproduce}` : ''}`);

  if (!process.env.FUZZ_PATHS) t.true(result.operations >= 100, `the document lists ${result.operations} operations`);
  t.true(result.requests > 0, 'schemathesis sent requests');
  t.deepEqual(result.fatalErrors, [], 'no request failed to get an answer (a crash, a reset, a timeout)');
  t.deepEqual(result.failures.map((f) => `${f.operation} ${f.check}: ${f.title}`), []);
  if (result.exitCode !== 0 && result.failures.length === 0 && result.fatalErrors.length === 0 && result.toolErrors.length === 0) {
    t.fail(`schemathesis exited ${result.exitCode}:\n${result.output.slice(-3000)}`);
  }

  // The gateway still serves.
  const health = await fetch(`${gw.url}/healthz`);
  t.is(health.status, 200);
  const balance = await fetch(`${gw.url}/v1/key/balance`, { headers: { authorization: `Bearer ${apiKey}` } });
  t.is(balance.status, 200);
});
