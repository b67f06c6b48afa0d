/**
 * `npm run temporal -- <args>`: the Temporal CLI this project builds and caches (dev/scripts/lib/tools.ts),
 * so every `temporal ...` command in README.md and docs/ runs as written without a `temporal` on the
 * PATH. The CLI reads TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE from the environment (default
 * 127.0.0.1:7233, `npm run dev`'s dev server).
 */
import { spawn } from 'node:child_process';
import { ensureTools } from './lib/tools';

const { temporal } = await ensureTools({ need: { temporal: true, ferretdb: false, redis: false }, log: (l) => process.stderr.write(`${l}\n`) });
const child = spawn(temporal!, process.argv.slice(2), { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
