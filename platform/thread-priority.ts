import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers the scheduling priority of the calling thread alone (Linux: a thread is a task with its own nice
 * value; `/proc/thread-self` names its id, and setpriority on that id touches no other thread). A worker's
 * CPU-heavy threads run niced so that, on a busy machine, the kernel gives the event loop that serves
 * workflow tasks, heartbeats and metrics its turn first. Elsewhere (no /proc, not permitted) nothing
 * changes; returns whether it did.
 */
export function niceThisThread(nice: number): boolean {
  if (nice <= 0) return false;
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    os.setPriority(tid, Math.min(19, nice));
    return true;
  } catch {
    return false;
  }
}
