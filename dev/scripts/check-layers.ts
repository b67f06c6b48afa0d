// `npm run check:layers`: the layering rules of DESIGN.md (dev/scripts/lib/layers.ts) on this tree; exit 1 on a violation.
import { fileURLToPath } from 'node:url';
import { checkLayers } from './lib/layers';

const violations = await checkLayers(fileURLToPath(new URL('../..', import.meta.url)));
for (const v of violations) console.log(`✘ ${v}`);
console.log(violations.length === 0 ? 'layering holds' : `${violations.length} layering violation(s)`);
process.exit(violations.length === 0 ? 0 : 1);
