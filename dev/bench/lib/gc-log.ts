/**
 * Where a process's garbage collection went, per request: V8's own account of
 * every collection (`node --trace-gc-nvp`, one line each, on the process's
 * stdout) cut to a benchmark's phases. A scavenge (young generation) and a
 * mark-compact (whole heap) stop the event loop for their `pause`; with
 * `--single-threaded-gc` (gateway/node-flags) the incremental marking before
 * a mark-compact runs on the main thread too (`incremental.steps_took`, summed
 * on the mark-compact's line). `promoted` is what a scavenge moved to the old
 * generation: what the old generation grows by, and what each scavenge copies.
 *
 * The lines carry milliseconds since the process's heap was set up; `spawnedAtUs`
 * (CLOCK_MONOTONIC microseconds, taken just before the spawn) maps them to the
 * phases' clock, a few tens of milliseconds early, which shifts a collection or
 * two across a phase's edge at most.
 */
import fs from 'node:fs';
import type { Phase } from './profile-summary';

export interface GcLine {
  atMs: number;
  kind: 'scavenge' | 'mark-compact' | 'other';
  pauseMs: number;
  stepsMs: number;
  promoted: number;
}

/** The flag that makes a Node process write these lines. */
export const GC_TRACE_FLAG = '--trace-gc-nvp';

/** `[pid:isolate]` (Node 20) or `[pid:isolate:thread]` (Node 24), the milliseconds since start, then the fields. */
const LINE = /^\[\d+:0x[0-9a-f]+(?::\d+)?\]\s+(\d+) ms: pause=([\d.]+) .*?\bgc=(\w+)\b/;
const field = (line: string, name: string): number => {
  const m = new RegExp(`\\b${name.replace('.', '\\.')}=([\\d.]+)`).exec(line);
  return m ? Number(m[1]) : 0;
};

/** The collections logged in `file` from byte `from` on (a log other processes appended to before is skipped that way). */
export function readGcLines(file: string, from = 0): GcLine[] {
  let text: string;
  try {
    const fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.max(0, size - from));
    fs.readSync(fd, buf, 0, buf.length, from);
    fs.closeSync(fd);
    text = buf.toString('utf8');
  } catch {
    return [];
  }
  const out: GcLine[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const gc = m[3];
    const kind = gc === 's' ? 'scavenge' : gc === 'mc' || gc === 'mmc' ? 'mark-compact' : 'other';
    out.push({ atMs: Number(m[1]), kind, pauseMs: Number(m[2]), stepsMs: kind === 'mark-compact' ? field(line, 'incremental.steps_took') : 0, promoted: field(line, 'promoted') });
  }
  return out;
}

export interface GcPerRequest {
  scavenges: number;
  markCompacts: number;
  /** Microseconds a request of the phase: scavenge pauses, mark-compact pauses with their incremental steps. */
  scavengeUs: number;
  markCompactUs: number;
  /** Bytes a request promoted to the old generation. */
  promotedBytes: number;
}

/** The phase's collections divided by its requests. */
export function gcOfPhase(lines: GcLine[], phase: Phase, spawnedAtUs: number): GcPerRequest {
  const from = (phase.startUs - spawnedAtUs) / 1000;
  const to = (phase.endUs - spawnedAtUs) / 1000;
  const inPhase = lines.filter((l) => l.atMs >= from && l.atMs < to);
  const n = Math.max(1, phase.requests);
  const sum = (f: (l: GcLine) => number, kind: GcLine['kind']) => inPhase.filter((l) => l.kind === kind).reduce((a, l) => a + f(l), 0);
  return {
    scavenges: inPhase.filter((l) => l.kind === 'scavenge').length,
    markCompacts: inPhase.filter((l) => l.kind === 'mark-compact').length,
    scavengeUs: (sum((l) => l.pauseMs, 'scavenge') * 1000) / n,
    markCompactUs: (sum((l) => l.pauseMs + l.stepsMs, 'mark-compact') * 1000) / n,
    promotedBytes: sum((l) => l.promoted, 'scavenge') / n,
  };
}

export function describeGc(label: string, g: GcPerRequest): string {
  return `${label}: ${(g.scavengeUs + g.markCompactUs).toFixed(1)} us a request on the event loop ` +
    `(${g.scavenges} scavenges, ${g.scavengeUs.toFixed(1)} us; ${g.markCompacts} mark-compacts with their incremental marking, ${g.markCompactUs.toFixed(1)} us); ` +
    `promoted ${(g.promotedBytes / 1024).toFixed(1)} KB a request`;
}
