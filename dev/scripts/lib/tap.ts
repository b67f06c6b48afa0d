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

/** One failed test or hook: its title and ava's detail block (assertion, diff, stack). */
export interface TapFailure {
  title: string;
  detail: string[];
}

export class TapReporter {
  readonly counts: TapCounts = { passed: 0, failed: 0, skipped: 0 };
  /** Kept so the run can repeat them at its very end, where a CI log's tail shows them. */
  readonly failures: TapFailure[] = [];
  private inYaml = false;
  private yamlOf: TapFailure | undefined;
  private readonly colours: boolean;

  constructor(private readonly write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) {
    this.colours = !!process.stdout.isTTY && !process.env.NO_COLOR;
  }

  line(raw: string): void {
    const line = raw.replace(/\r$/, '');
    if (this.inYaml) {
      if (/^\s*\.\.\.\s*$/.test(line)) {
        this.inYaml = false;
        this.yamlOf = undefined;
      } else {
        const shown = `      ${line.trim() === '---' ? '' : line.replace(/^ {2,4}/, '')}`;
        this.yamlOf?.detail.push(shown);
        this.write(this.paint(90, shown));
      }
      return;
    }
    if (/^\s*---\s*$/.test(line)) {
      this.inYaml = true;
      return;
    }
    // A failed test's t.log lines come between its `not ok` and its YAML block: the block still belongs to it.
    const m = RESULT.exec(line);
    if (m) {
      const [, not, title, directive] = m;
      if (directive) {
        this.counts.skipped++;
        this.write(this.paint(33, `  - ${title} (${directive.toLowerCase()})`));
      } else if (not) {
        this.counts.failed++;
        const failure: TapFailure = { title, detail: [] };
        this.failures.push(failure);
        this.yamlOf = failure;
        this.write(this.paint(31, `  ✘ ${title}`));
      } else {
        this.counts.passed++;
        this.write(this.paint(32, `  ✔ ${title}`));
      }
      if (!not || directive) this.yamlOf = undefined;
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

/** The failures again, each with the first lines of its detail, for the end of the log. */
export function failureRecap(failures: readonly TapFailure[], detailLines = 25): string[] {
  if (failures.length === 0) return [];
  const out = [`\nfailed (${failures.length}):`];
  for (const f of failures) {
    out.push(`  ✘ ${f.title}`);
    const detail = f.detail.filter((l) => l.trim() !== '');
    out.push(...detail.slice(0, detailLines));
    if (detail.length > detailLines) out.push(`      … ${detail.length - detailLines} more lines above`);
  }
  return out;
}

export function summaryLine(c: TapCounts): string {
  return `${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ''}`;
}
