import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { checkLayers, layeredFolders, LAYER_RULES, ROOM_CIRCLE_RULE, roomOf } from '../../dev/scripts/lib/layers';
import { scratchDir } from '../../dev/scripts/lib/scratch';

/** A throw-away tree with the repository's folder names, one file per path. */
function tree(files: Record<string, string>): string {
  const dir = scratchDir('layers');
  fs.symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** One small file per floor, every arrow pointing down. */
const CLEAN: Record<string, string> = {
  'domain/money.ts': "import { z } from 'zod';\nexport const Nano = z.number().int();\n",
  'platform/redis.ts': "import { Nano } from '../domain/money';\nexport const r = Nano;\n",
  'protocols/sse.ts': 'export const SSE_DONE = "data: [DONE]";\n',
  'providers/chat.ts': "import { SSE_DONE } from '../protocols/sse';\nimport { r } from '../platform/redis';\nexport const p = [SSE_DONE, r];\n",
  'capabilities/accounts/wallet.ts': "import { r } from '../../platform/redis';\nexport const wallet = r;\n",
  'capabilities/media/tasks.ts': "import { wallet } from '../accounts/wallet';\nimport { p } from '../../providers/chat';\nimport type { A } from '../../workflows/media-task';\nexport const tasks = [wallet, p];\nexport type Started = A;\n",
  'capabilities/deps.ts': "import { tasks } from './media/tasks';\nexport const deps = { tasks };\n",
  'activities/media.ts': "import { tasks } from '../capabilities/media/tasks';\nexport const createMediaActivities = () => ({ a: async () => tasks });\nexport type MediaActivities = ReturnType<typeof createMediaActivities>;\n",
  'workflows/media-task.ts': "import type { MediaActivities } from '../activities/media';\nimport { Nano } from '../domain/money';\nexport type A = MediaActivities;\nexport const n = Nano;\n",
  'gateway/context.ts': "import { deps } from '../capabilities/deps';\nexport const ctx = deps;\n",
  // The gateway starts a workflow by name, typed by an import type of it.
  'gateway/start.ts': "import type { A } from '../workflows/media-task';\nexport type Started = A;\n",
  'workers/main.ts': "import { createMediaActivities } from '../activities/media';\nimport { deps } from '../capabilities/deps';\nexport const w = [createMediaActivities, deps];\n",
  'dev/simulator/sse.ts': 'export const DONE = "data: [DONE]";\n',
  // a stand-in for an outside service, chosen by production code outside production only
  'dev/simulator/payments/stand-in.ts': 'export class StandIn {}\n',
  'capabilities/billing/select.ts': "import { StandIn } from '../../dev/simulator/payments/stand-in';\nexport const pick = () => StandIn;\n",
  'dev/bench/chat.ts': "import { ctx } from '../../gateway/context';\nexport const b = ctx;\n",
  'test/x.test.ts': "import { ctx } from '../gateway/context';\nexport const t = ctx;\n",
};

test('a tree whose arrows all point down passes; type-only imports of workflows and activities are allowed', async (t) => {
  t.deepEqual(await checkLayers(tree(CLEAN)), []);
});

test('the folders read are found on disk: a new top-level folder is checked without an edit; dev/ and test/ are not, but the simulator is', (t) => {
  const dir = tree({ ...CLEAN, 'newfolder/x.ts': 'export const x = 1;\n' });
  t.deepEqual(layeredFolders(dir), ['activities', 'capabilities', 'dev/simulator', 'domain', 'gateway', 'newfolder', 'platform', 'protocols', 'providers', 'workers', 'workflows']);
});

test('a room is a top-level folder, or one capability', (t) => {
  t.is(roomOf('capabilities/media/x/y.ts'), 'capabilities/media');
  t.is(roomOf('capabilities/deps.ts'), 'capabilities');
  t.is(roomOf('gateway/routes/chat.ts'), 'gateway');
});

const SEEDED: Array<[rule: string, file: string, text: string]> = [
  ['domain-is-pure', 'domain/ids.ts', "import { randomBytes } from 'node:crypto';\nexport const id = () => randomBytes(12).toString('hex');\n"],
  ['domain-is-pure', 'domain/store.ts', "import { r } from '../platform/redis';\nexport const s = r;\n"],
  ['adapters-know-no-capability', 'providers/bad.ts', "import { wallet } from '../capabilities/accounts/wallet';\nexport const s = wallet;\n"],
  ['platform-knows-no-capability', 'platform/bad.ts', "import { wallet } from '../capabilities/accounts/wallet';\nexport const s = wallet;\n"],
  // the upward import the issue names: a capability reaching back into the HTTP process
  ['capabilities-know-no-process', 'capabilities/webhooks/body.ts', "import { ctx } from '../../gateway/context';\nexport const s = ctx;\n"],
  ['activities-know-no-gateway', 'activities/bad.ts', "import type { Started } from '../gateway/start';\nexport type S = Started;\n"],
  ['nothing-imports-a-process', 'platform/up.ts', "import { ctx } from '../gateway/context';\nexport const s = ctx;\n"],
  ['nothing-imports-the-worker', 'gateway/bad.ts', "import { w } from '../workers/main';\nexport const s = w;\n"],
  ['workflows-see-activities-as-types', 'workflows/bad.ts', "import { createMediaActivities } from '../activities/media';\nexport const w = createMediaActivities;\n"],
  ['workflows-see-activities-as-types', 'workflows/bad2.ts', "import { p } from '../providers/chat';\nexport const w = p;\n"],
  ['workflows-are-deterministic', 'workflows/bad3.ts', "import { r } from '../platform/redis';\nexport const w = r;\n"],
  ['workflows-use-no-node-builtins', 'workflows/bad4.ts', "import fs from 'node:fs';\nexport const w = fs;\n"],
  ['workflow-code-stays-in-the-worker', 'capabilities/media/starts.ts', "import { n } from '../../workflows/media-task';\nexport const s = n;\n"],
  ['workflow-code-stays-in-the-worker', 'gateway/starts.ts', "import { n } from '../workflows/media-task';\nexport const g = n;\n"],
  ['production-imports-no-dev', 'gateway/sim.ts', "import { DONE } from '../dev/simulator/sse';\nexport const g = DONE;\n"],
  ['simulator-shares-nothing-with-adapters', 'dev/simulator/bad.ts', "import { SSE_DONE } from '../../protocols/sse';\nexport const s = SSE_DONE;\n"],
  ['adapters-share-nothing-with-simulator', 'providers/bad-sim.ts', "import { DONE } from '../dev/simulator/sse';\nexport const s = DONE;\n"],
];

for (const [rule, file, text] of SEEDED) {
  test(`a seeded violation of ${rule} (${file}) fails the check`, async (t) => {
    const violations = await checkLayers(tree({ ...CLEAN, [file]: text }));
    t.true(violations.some((v) => v.startsWith(`${rule}: ${file} ->`)), violations.join('\n'));
  });
}

test('every rule has a seeded violation above', (t) => {
  t.deepEqual(new Set(LAYER_RULES.map((r) => r.name)), new Set(SEEDED.map(([rule]) => rule)));
});

test('a seeded circle between two capabilities fails the check, even through a type-only import', async (t) => {
  const violations = await checkLayers(tree({
    ...CLEAN,
    'capabilities/accounts/refund.ts': "import type { tasks } from '../media/tasks';\nexport type R = typeof tasks;\n",
  }));
  const circle = violations.find((v) => v.startsWith(`${ROOM_CIRCLE_RULE}:`));
  t.truthy(circle, violations.join('\n'));
  t.regex(circle!, /capabilities\/accounts, capabilities\/media|capabilities\/media, capabilities\/accounts/);
  t.regex(circle!, /capabilities\/accounts\/refund\.ts -> capabilities\/media\/tasks\.ts/);
});

test('a seeded circle through three rooms fails the check', async (t) => {
  const violations = await checkLayers(tree({
    ...CLEAN,
    'capabilities/usage/rows.ts': "import { tasks } from '../media/tasks';\nexport const rows = tasks;\n",
    'capabilities/accounts/statement.ts': "import { rows } from '../usage/rows';\nexport const st = rows;\n",
  }));
  t.true(violations.some((v) => v.startsWith(`${ROOM_CIRCLE_RULE}: capabilities/accounts, capabilities/media, capabilities/usage`)), violations.join('\n'));
});

test('files that import each other inside one room are no circle between rooms', async (t) => {
  t.deepEqual(await checkLayers(tree({
    ...CLEAN,
    'gateway/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
    'gateway/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
  })), []);
});
