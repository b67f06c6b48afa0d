import fs from 'node:fs';
import { execFileSync } from 'node:child_process';

/**
 * CPU time of named processes, read from /proc (Linux): how a benchmark shows
 * where the work of one request or task went (the gateway, the worker, the
 * stores, Temporal), independent of how busy the shared machine is.
 */
export interface ProcessSet {
  /** CPU milliseconds (user + system) used so far by each named process. */
  sample(): Record<string, number>;
  names: string[];
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every common Linux build). */
const TICKS_PER_S = 100;

function cpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces) start after the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_S;
  } catch {
    return NaN;
  }
}

/** Processes whose command line contains `needle` (the first match). */
export function findPid(needle: string): number | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(needle) && Number(entry) !== process.pid) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

/** Track these processes (name -> pid); the benchmark process itself is added as `bench client`. */
export function processSet(pids: Record<string, number | undefined>): ProcessSet {
  const known = Object.entries(pids).filter((e): e is [string, number] => e[1] !== undefined);
  return {
    names: [...known.map(([n]) => n), 'bench client'],
    sample() {
      const out: Record<string, number> = {};
      for (const [name, pid] of known) out[name] = cpuMs(pid);
      const own = process.cpuUsage();
      out['bench client'] = (own.user + own.system) / 1000;
      return out;
    },
  };
}

/** CPU ms per unit of work between two samples, per process, and their sum. */
export function perUnit(before: Record<string, number>, after: Record<string, number>, units: number): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const name of Object.keys(after)) {
    const v = (after[name] - before[name]) / units;
    out[name] = v;
    if (Number.isFinite(v)) total += v;
  }
  out.total = total;
  return out;
}

/** The process listening on the port of `url` (a store the benchmark's services started). */
export function pidOfPort(url: string): number | undefined {
  try {
    const out = execFileSync('ss', ['-ltnpH', `sport = :${new URL(url).port}`], { encoding: 'utf8' });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
