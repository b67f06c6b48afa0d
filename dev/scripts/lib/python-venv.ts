// Python tools and clients (PyPI) in virtualenvs built once per machine and user, outside the clone, beside
// the other tools: ${XDG_CACHE_HOME:-~/.cache}/model-gateway/tools/<name>/venv. Only PyPI is contacted, and
// only when a venv is missing; a lock keeps two runs from building the same one at once.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { toolsCacheDir, withLock } from './tools';

export interface Venv {
  /** Directory name under the tools cache; name the versions in it, so another version is another venv. */
  name: string;
  /** pip requirements, pinned. */
  packages: string[];
  /** Whether a built venv works (its python is given): an import, a `--version`. */
  works: (python: string) => boolean;
}

const READY = '.ready';

export function venvDir(v: Pick<Venv, 'name'>): string {
  return path.join(toolsCacheDir(), v.name);
}

/** The venv's python. */
export function venvPython(v: Pick<Venv, 'name'>): string {
  return path.join(venvDir(v), 'venv', 'bin', 'python');
}

export function quietPython(): NodeJS.ProcessEnv {
  return { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1', PYTHONDONTWRITEBYTECODE: '1', SCHEMATHESIS_TELEMETRY: 'false' };
}

const ready = (v: Venv) => fs.existsSync(path.join(venvDir(v), READY)) && v.works(venvPython(v));

/** The venv's python, building the venv first when it is missing or broken. */
export async function ensureVenv(v: Venv, log: (line: string) => void = console.log): Promise<string> {
  if (ready(v)) return venvPython(v);
  const dir = venvDir(v);
  fs.mkdirSync(dir, { recursive: true });
  return withLock(`${dir}.lock`, log, `${v.name} venv`, async () => {
    if (ready(v)) return venvPython(v);
    const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version'], { stdio: 'ignore' }).status === 0);
    if (!python) throw new Error(`python3 is missing: ${v.name} (PyPI) runs in a Python 3 virtualenv; install python3 and python3-venv`);
    const started = Date.now();
    log(`tools: installing ${v.packages.join(' ')} (PyPI) into ${dir}/venv…`);
    fs.rmSync(path.join(dir, 'venv'), { recursive: true, force: true });
    fs.rmSync(path.join(dir, READY), { force: true });
    await run(python, ['-m', 'venv', path.join(dir, 'venv')], log);
    await run(venvPython(v), ['-m', 'pip', 'install', '-q', ...v.packages], log);
    fs.writeFileSync(path.join(dir, READY), `${v.packages.join('\n')}\n`);
    if (!v.works(venvPython(v))) throw new Error(`${v.name} was installed but does not work`);
    log(`tools: ${v.name} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return venvPython(v);
  });
}

function run(cmd: string, args: string[], log: (l: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: quietPython() });
    let tail = '';
    const keep = (d: Buffer) => (tail = (tail + d.toString()).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const beat = setInterval(() => log(`  [pip] still running \`${path.basename(cmd)} ${args.join(' ')}\`…`), 30_000);
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
