// Schemathesis (PyPI) in a virtualenv built once per machine and user, outside
// the clone, beside the other tools: ${XDG_CACHE_HOME:-~/.cache}/model-gateway/
// tools/schemathesis-<version>/. Only PyPI is contacted, and only when the venv
// is missing; a lock keeps two runs from building it at once.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { toolsCacheDir, withLock } from './tools';

export const SCHEMATHESIS_VERSION = '4.32.5';

export function schemathesisDir(): string {
  return path.join(toolsCacheDir(), `schemathesis-${SCHEMATHESIS_VERSION}`);
}

/** The `schemathesis` executable of the cached venv. */
export function schemathesisBinary(): string {
  return path.join(schemathesisDir(), 'venv', 'bin', 'schemathesis');
}

const READY = '.ready';

function works(bin: string): boolean {
  if (!fs.existsSync(path.join(schemathesisDir(), READY))) return false;
  const r = spawnSync(bin, ['--version'], { stdio: 'pipe', timeout: 60_000, env: quietPython() });
  return r.status === 0 && r.stdout.toString().includes(SCHEMATHESIS_VERSION);
}

function quietPython(): NodeJS.ProcessEnv {
  return { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1', PYTHONDONTWRITEBYTECODE: '1', SCHEMATHESIS_TELEMETRY: 'false' };
}

/** Path of the schemathesis executable, building the venv first when it is missing. */
export async function ensureSchemathesis(log: (line: string) => void = console.log): Promise<string> {
  const bin = schemathesisBinary();
  if (works(bin)) return bin;
  const dir = schemathesisDir();
  fs.mkdirSync(dir, { recursive: true });
  return withLock(`${dir}.lock`, log, `schemathesis ${SCHEMATHESIS_VERSION} venv`, async () => {
    if (works(bin)) return bin;
    const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version'], { stdio: 'ignore' }).status === 0);
    if (!python) throw new Error('python3 is missing: schemathesis (PyPI) runs in a Python 3.9+ virtualenv; install python3 and python3-venv');
    const started = Date.now();
    log(`tools: installing schemathesis ${SCHEMATHESIS_VERSION} (PyPI) into ${dir}/venv…`);
    fs.rmSync(path.join(dir, 'venv'), { recursive: true, force: true });
    fs.rmSync(path.join(dir, READY), { force: true });
    await run(python, ['-m', 'venv', path.join(dir, 'venv')], log);
    await run(path.join(dir, 'venv', 'bin', 'python'), ['-m', 'pip', 'install', '-q', `schemathesis==${SCHEMATHESIS_VERSION}`], log);
    fs.writeFileSync(path.join(dir, READY), `${SCHEMATHESIS_VERSION}\n`);
    if (!works(bin)) throw new Error(`schemathesis was installed but \`${bin} --version\` fails`);
    log(`tools: schemathesis ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return bin;
  });
}

function run(cmd: string, args: string[], log: (l: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: quietPython() });
    let tail = '';
    const keep = (d: Buffer) => (tail = (tail + d.toString()).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const beat = setInterval(() => log(`  [schemathesis] still running \`${path.basename(cmd)} ${args.join(' ')}\`…`), 30_000);
    child.on('error', (err) => {
      clearInterval(beat);
      reject(err);
    });
    child.on('close', (code) => {
      clearInterval(beat);
      if (code === 0) resolve();
      else reject(new Error(`\`${cmd} ${args.join(' ')}\` failed (exit ${code})\n${tail}`));
    });
  });
}
