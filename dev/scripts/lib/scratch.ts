import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made = new Set<string>();
let hooked = false;

function removeAll(): void {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  made.clear();
}

/**
 * A fresh directory under the system's temporary directory, removed when the process exits (a test
 * file's worker, a dev script), however it exits short of a kill. Tests and scripts that run on every
 * `npm test` left hundreds of these behind otherwise.
 */
export function scratchDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  made.add(dir);
  if (!hooked) {
    hooked = true;
    process.once('exit', removeAll);
  }
  return dir;
}
