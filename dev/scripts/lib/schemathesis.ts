// Schemathesis (PyPI) in a cached virtualenv (./python-venv.ts): tools/schemathesis-<version>/.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ensureVenv, quietPython, venvDir, type Venv } from './python-venv';

export const SCHEMATHESIS_VERSION = '4.32.5';

const VENV: Venv = {
  name: `schemathesis-${SCHEMATHESIS_VERSION}`,
  packages: [`schemathesis==${SCHEMATHESIS_VERSION}`],
  works: () => {
    const r = spawnSync(schemathesisBinary(), ['--version'], { stdio: 'pipe', timeout: 60_000, env: quietPython() });
    return r.status === 0 && r.stdout.toString().includes(SCHEMATHESIS_VERSION);
  },
};

export function schemathesisDir(): string {
  return venvDir(VENV);
}

/** The `schemathesis` executable of the cached venv. */
export function schemathesisBinary(): string {
  return path.join(schemathesisDir(), 'venv', 'bin', 'schemathesis');
}

/** Path of the schemathesis executable, building the venv first when it is missing. */
export async function ensureSchemathesis(log: (line: string) => void = console.log): Promise<string> {
  await ensureVenv(VENV, log);
  return schemathesisBinary();
}
