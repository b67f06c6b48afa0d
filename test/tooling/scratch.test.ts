import test from 'ava';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';

test('scratchDir: a directory made by a process is gone once it exits, after an uncaught error too', (t) => {
  for (const ending of ['', "throw new Error('boom');"]) {
    const script = `import { scratchDir } from './dev/scripts/lib/scratch';\nimport fs from 'node:fs';\nconst d = scratchDir('scratch-test');\nfs.writeFileSync(d + '/f', 'x');\nfs.mkdirSync(d + '/sub');\nconsole.log(d);\n${ending}`;
    let out = '';
    try {
      out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (err) {
      out = String((err as { stdout?: string }).stdout ?? '');
    }
    const dir = out.trim();
    t.regex(dir, /scratch-test-/);
    t.false(fs.existsSync(dir), `${dir} left behind (${ending || 'normal exit'})`);
  }
});
