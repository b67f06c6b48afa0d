/**
 * The gateway runs with the same node flags wherever it runs: `npm start`,
 * the Docker image, `npm run dev` and the benchmarks (which import
 * scripts/lib/gateway-node-flags.ts), so what the benchmarks measure is what
 * ships.
 */
import test from 'ava';
import fs from 'node:fs';
import { GATEWAY_NODE_FLAGS } from '../../scripts/lib/gateway-node-flags';

test('package.json start and the Docker entrypoint pass the gateway exactly its flags', (t) => {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  t.is(pkg.scripts.start, ['node', ...GATEWAY_NODE_FLAGS, 'dist/gateway.mjs'].join(' '));
  const entry = fs.readFileSync('scripts/docker-entrypoint.sh', 'utf8');
  const m = /^GATEWAY_FLAGS=\((.*)\)$/m.exec(entry);
  t.truthy(m, 'scripts/docker-entrypoint.sh defines GATEWAY_FLAGS');
  t.deepEqual(m![1].split(/\s+/).filter(Boolean), [...GATEWAY_NODE_FLAGS]);
  t.regex(entry, /exec node "\$\{GATEWAY_FLAGS\[@\]\}" dist\/gateway\.mjs/);
  t.regex(entry, /serve gateway\/server\.ts "\$\{GATEWAY_FLAGS\[@\]\}"/);
});
