import { activeFailpoints } from './config';

/**
 * Named crash points for tests of crash safety (in the spirit of FoundationDB's
 * buggify / failpoints). Inert unless the process was started with
 * FAILPOINTS=name[,name...]; then reaching the point kills the process with
 * SIGKILL, exactly as a host failure or a deploy swap would.
 */
const active = new Set(activeFailpoints());

export function failpoint(name: string): void {
  if (active.size === 0 || !active.has(name)) return;
  process.stderr.write(`${JSON.stringify({ level: 'warn', msg: 'failpoint reached: SIGKILL', failpoint: name })}\n`);
  process.kill(process.pid, 'SIGKILL');
}

/** Whether a failpoint is armed in this process (to skip setting one up on the hot path). */
export function armed(name: string): boolean {
  return active.size > 0 && active.has(name);
}
