// Child processes that never outlive the script that started them. Each child
// gets its own process group (so Ctrl-C reaches only us and we stop children in
// order); on SIGINT/SIGTERM/SIGHUP we stop them gracefully, and on any exit,
// including an uncaught error, every group still alive gets SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';

export interface Managed {
  name: string;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True once the process has exited. */
  done: () => boolean;
  stop(graceMs?: number): Promise<void>;
  logFile?: string;
}

export interface SpawnOptions {
  name: string;
  cmd: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Append stdout+stderr to this file (created with its folder). */
  logFile?: string;
  /** Otherwise print each output line prefixed with `[name]`… */
  prefix?: boolean;
  /** …or leave child.stdout and child.stderr to the caller to read. */
  pipe?: boolean;
}

const live = new Set<Managed>();
let handlersInstalled = false;
let shuttingDown = false;

export function spawnManaged(opts: SpawnOptions): Managed {
  installHandlers();
  let stdio: Array<'ignore' | 'pipe' | 'inherit' | number> = ['ignore', 'inherit', 'inherit'];
  let fd: number | undefined;
  if (opts.logFile) {
    fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
    fd = fs.openSync(opts.logFile, 'a');
    stdio = ['ignore', fd, fd];
  } else if (opts.prefix || opts.pipe) {
    stdio = ['ignore', 'pipe', 'pipe'];
  }
  const child = spawn(opts.cmd, opts.args, { env: opts.env, cwd: opts.cwd, stdio, detached: true });
  if (fd !== undefined) fs.closeSync(fd);
  if (opts.prefix && child.stdout && child.stderr) {
    const tag = colour(opts.name);
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${tag} ${line}\n`));
    }
  }
  let finished = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', (err) => {
      console.error(`[${opts.name}] failed to start: ${err.message}`);
      finished = true;
      resolve({ code: -1, signal: null });
    });
    child.on('exit', (code, signal) => {
      finished = true;
      resolve({ code, signal });
    });
  });
  const managed: Managed = {
    name: opts.name,
    child,
    exited,
    logFile: opts.logFile,
    done: () => finished,
    async stop(graceMs = 10_000) {
      if (!finished) {
        signalGroup(child, 'SIGTERM');
        const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      // Leftover members of the group (a wrapper's children) go too.
      signalGroup(child, 'SIGKILL');
      live.delete(managed);
    },
  };
  live.add(managed);
  void exited.then(() => {
    signalGroup(child, 'SIGTERM'); // orphans the leader left behind, if any
    live.delete(managed);
  });
  return managed;
}

/** Stops every managed child still running, newest first. */
export async function stopAll(): Promise<void> {
  for (const m of [...live].reverse()) await m.stop();
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => {
    for (const m of live) signalGroup(m.child, 'SIGTERM');
  });
  const codes: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
  let firstSignalAt = 0;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      // The same Ctrl-C may arrive twice (directly and relayed by a wrapper):
      // only a second one later than a second after the first forces exit.
      if (shuttingDown) {
        if (Date.now() - firstSignalAt > 1000) {
          for (const m of live) signalGroup(m.child, 'SIGKILL');
          process.exit(codes[sig]);
        }
        return;
      }
      shuttingDown = true;
      firstSignalAt = Date.now();
      console.error(`\n${sig}: stopping…`);
      void (async () => {
        await stopAll();
        process.exit(codes[sig]);
      })();
    });
  }
}

const palette = [36, 35, 33, 32, 34, 31];
const assigned = new Map<string, string>();
function colour(name: string): string {
  let tag = assigned.get(name);
  if (!tag) {
    const c = palette[assigned.size % palette.length];
    tag = process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[${c}m[${name}]\x1b[0m` : `[${name}]`;
    assigned.set(name, tag);
  }
  return tag;
}

/** True if something accepts TCP connections on 127.0.0.1:port. */
export function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A port the OS says is free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `preferred` if it is free, else (when allowed) some free port, else an error naming the port. */
export async function pickPort(preferred: number, what: string, fallback: boolean): Promise<number> {
  if (!(await portInUse(preferred))) return preferred;
  if (fallback) {
    const port = await freePort();
    console.log(`  ${what}: port ${preferred} is taken, using ${port}`);
    return port;
  }
  throw new Error(
    `${what}: 127.0.0.1:${preferred} is already in use — is another run still going? ` +
      `(see \`ss -ltnp 'sport = :${preferred}'\`), or point the matching *_URL variable at it`,
  );
}

/** The last lines of a log file, for error messages. */
export function tailFile(file: string | undefined, lines = 25): string {
  if (!file) return '';
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Waits until 127.0.0.1:port accepts connections; fails early if `proc` exits. */
export async function waitForPort(port: number, proc: Managed | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc?.done()) {
      const { code, signal } = await proc.exited;
      throw new Error(`${proc.name} exited (${signal ?? `code ${code}`}) before listening on port ${port}`);
    }
    if (await portInUse(port)) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
