import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkLayers, LAYER_RULES } from '../../scripts/lib/layers';

/** A throw-away tree with the repository's folder names, one file per path. */
function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  fs.symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

const FOLDERS = ['domain', 'workflows', 'activities', 'services', 'gateway', 'simulator', 'protocols', 'providers'];

const CLEAN = {
  'domain/money.ts': "import { z } from 'zod';\nexport const Nano = z.number().int();\n",
  'activities/media.ts': "export const createMediaActivities = () => ({ a: async () => 1 });\nexport type MediaActivities = ReturnType<typeof createMediaActivities>;\n",
  'workflows/media-task.ts': "import type { MediaActivities } from '../activities/media';\nimport { Nano } from '../domain/money';\nexport type A = MediaActivities;\nexport const n = Nano;\n",
  'gateway/context.ts': "import type { MediaActivities } from '../activities/media';\nexport type Ctx = MediaActivities;\n",
  // The gateway starts a workflow by name, typed by an import type of it.
  'gateway/start.ts': "import type { A } from '../workflows/media-task';\nexport type Started = A;\n",
  'services/tasks.ts': "import { Nano } from '../domain/money';\nexport const t = Nano;\n",
  'protocols/sse.ts': 'export const SSE_DONE = "data: [DONE]";\n',
  'providers/chat.ts': "import { SSE_DONE } from '../protocols/sse';\nexport const p = SSE_DONE;\n",
  'simulator/sse.ts': 'export const DONE = "data: [DONE]";\n',
};

test('a tree that keeps the rules passes; type-only imports of activities from workflows are allowed', async (t) => {
  t.deepEqual(await checkLayers(tree(CLEAN), FOLDERS), []);
});

const SEEDED: Array<[rule: string, file: string, text: string]> = [
  ['domain-is-pure', 'domain/ids.ts', "import { randomBytes } from 'node:crypto';\nexport const id = () => randomBytes(12).toString('hex');\n"],
  ['domain-is-pure', 'domain/store.ts', "import { createMediaActivities } from '../activities/media';\nexport const s = createMediaActivities;\n"],
  ['workflows-see-activities-as-types', 'workflows/bad.ts', "import { createMediaActivities } from '../activities/media';\nexport const w = createMediaActivities;\n"],
  ['workflows-see-activities-as-types', 'workflows/bad2.ts', "import { p } from '../providers/chat';\nexport const w = p;\n"],
  ['workflows-are-deterministic', 'workflows/bad3.ts', "import { t } from '../services/tasks';\nexport const w = t;\n"],
  ['workflows-use-no-node-builtins', 'workflows/bad4.ts', "import fs from 'node:fs';\nexport const w = fs;\n"],
  ['workflow-code-stays-in-the-worker', 'services/starts.ts', "import { n } from '../workflows/media-task';\nexport const s = n;\n"],
  ['workflow-code-stays-in-the-worker', 'gateway/starts.ts', "import { n } from '../workflows/media-task';\nexport const g = n;\n"],
  ['services-know-no-gateway', 'services/bad.ts', "import type { Ctx } from '../gateway/context';\nexport type S = Ctx;\n"],
  ['simulator-shares-nothing-with-adapters', 'simulator/bad.ts', "import { SSE_DONE } from '../protocols/sse';\nexport const s = SSE_DONE;\n"],
  ['adapters-share-nothing-with-simulator', 'providers/bad.ts', "import { DONE } from '../simulator/sse';\nexport const s = DONE;\n"],
];

for (const [rule, file, text] of SEEDED) {
  test(`a seeded violation of ${rule} (${file}) fails the check`, async (t) => {
    const violations = await checkLayers(tree({ ...CLEAN, [file]: text }), FOLDERS);
    t.true(violations.some((v) => v.startsWith(`${rule}: ${file} ->`)), violations.join('\n'));
  });
}

test('every rule has a seeded violation above', (t) => {
  t.deepEqual(new Set(LAYER_RULES.map((r) => r.name)), new Set(SEEDED.map(([rule]) => rule)));
});
