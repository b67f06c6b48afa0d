// Reads ava's TAP output line by line, prints it for a person and counts it.
// ok = passed; ok … # SKIP and not ok … # TODO = skipped; any other not ok
// (a failed test or hook, an uncaught exception, a file that crashed or timed
// out) = failed.

export interface TapCounts {
  passed: number;
  failed: number;
  skipped: number;
}

const RESULT = /^(not )?ok\s+\d+\s*(?:-\s*)?(.*?)(?:\s+#\s+(SKIP|TODO)\b.*)?$/i;

export class TapReporter {
  readonly counts: TapCounts = { passed: 0, failed: 0, skipped: 0 };
  private inYaml = false;
  private readonly colours: boolean;

  constructor(private readonly write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) {
    this.colours = !!process.stdout.isTTY && !process.env.NO_COLOR;
  }

  line(raw: string): void {
    const line = raw.replace(/\r$/, '');
    if (this.inYaml) {
      if (/^\s*\.\.\.\s*$/.test(line)) this.inYaml = false;
      else this.write(this.paint(90, `      ${line.trim() === '---' ? '' : line.replace(/^ {2,4}/, '')}`));
      return;
    }
    if (/^\s*---\s*$/.test(line)) {
      this.inYaml = true;
      return;
    }
    const m = RESULT.exec(line);
    if (m) {
      const [, not, title, directive] = m;
      if (directive) {
        this.counts.skipped++;
        this.write(this.paint(33, `  - ${title} (${directive.toLowerCase()})`));
      } else if (not) {
        this.counts.failed++;
        this.write(this.paint(31, `  ✘ ${title}`));
      } else {
        this.counts.passed++;
        this.write(this.paint(32, `  ✔ ${title}`));
      }
      return;
    }
    // ava's closing summary (# tests/pass/skip/fail) is replaced by ours.
    if (/^TAP version|^1\.\.\d+|^# (tests|pass|skip|fail|todo) \d+\s*$/.test(line)) return;
    if (line.trim() === '') return;
    this.write(line.startsWith('# ') ? this.paint(33, `  ${line.slice(2)}`) : line);
  }

  private paint(code: number, text: string): string {
    return this.colours ? `\x1b[${code}m${text}\x1b[0m` : text;
  }
}

export function summaryLine(c: TapCounts): string {
  return `${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ''}`;
}
