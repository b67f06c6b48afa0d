import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startGateway, type TestGateway } from '../helpers/stack';

/**
 * Every fenced shell block marked runnable (```sh runnable or ```bash runnable) in README.md and
 * docs/ runs as written against the test stack, so the commands operators copy cannot rot. The
 * blocks see what `npm run dev` gives a shell: GATEWAY_URL, ADMIN_TOKEN, API_KEY, ACCOUNT_ID and the
 * stores' variables (TEMPORAL_ADDRESS, MONGO_URL, REDIS_URL, REDIS_PREFIX, KEY_ENCRYPTION_KEY); each
 * runs under `bash -euo pipefail` from the repository's root and must exit 0.
 */
const run = promisify(execFile);
const FENCE = /^```(sh|bash) runnable\s*\n([\s\S]*?)^```\s*$/gm;

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(p);
    return e.name.endsWith('.md') ? [p] : [];
  });
}

function runnableBlocks(): Array<{ file: string; line: number; code: string }> {
  const out: Array<{ file: string; line: number; code: string }> = [];
  for (const file of ['README.md', ...markdownFiles('docs')]) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(FENCE)) out.push({ file, line: text.slice(0, m.index).split('\n').length, code: m[2]! });
  }
  return out;
}

const blocks = runnableBlocks();
let gw: TestGateway;
let env: NodeJS.ProcessEnv;
test.before(async () => {
  // The docs name the media task queue: this file's worker polls it (no other test file starts workflows there).
  gw = await startGateway({ TEMPORAL_TASK_QUEUE: 'media' }, { worker: true });
  const account = await gw.newAccount({ name: 'runnable-docs' });
  const key = await gw.newKey(account.id);
  env = {
    ...process.env,
    GATEWAY_URL: gw.url, ADMIN_TOKEN: gw.config.ADMIN_TOKEN, API_KEY: key.key, ACCOUNT_ID: account.id,
    MONGO_URL: gw.config.MONGO_URL, REDIS_URL: gw.config.REDIS_URL, REDIS_PREFIX: gw.config.REDIS_PREFIX,
    TEMPORAL_ADDRESS: gw.config.TEMPORAL_ADDRESS, KEY_ENCRYPTION_KEY: gw.config.KEY_ENCRYPTION_KEY,
  };
});
test.after.always(async () => gw?.close());

test('the docs have runnable blocks', (t) => {
  t.true(blocks.length >= 3, `${blocks.length} runnable blocks`);
});

for (const block of blocks) {
  test(`${block.file}:${block.line} runs as written`, async (t) => {
    try {
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', block.code], { env, timeout: 120_000, maxBuffer: 8 << 20 });
      t.log(stdout.trim().split('\n').slice(0, 5).join('\n'));
      t.pass();
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      t.fail(`exit ${e.code}\n$ ${block.code}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
  });
}
