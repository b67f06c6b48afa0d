import type { z } from 'zod';

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

export interface IssueReport {
  /** `messages[0].role: Invalid option: expected one of "system"|"user"` */
  message: string;
  /** Dotted path of the field at fault: `messages.0.role`; undefined for the body itself. */
  param: string | undefined;
}

/** `messages[0].content` */
export function displayPath(path: Path): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out.length === 0 ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** `messages.0.content` */
export function dottedPath(path: Path): string {
  return path.map(String).join('.');
}

/**
 * Turns the first zod issue into one readable sentence that names the field.
 * Unions are resolved to the branch that got furthest (the branch the client
 * most likely meant), so a text block without `text` reports
 * `content[0].text`, not "Invalid input" on the block.
 */
export function describeIssue(issue: Issue, root?: unknown, prefix: Path = []): IssueReport {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union') {
    if ('note' in issue && issue.note === 'No matching discriminator') {
      const options = ((issue as { options?: unknown[] }).options ?? []).map((o) => JSON.stringify(o)).join('|');
      return report(path, `Invalid option: expected one of ${options}`);
    }
    const branches = issue.errors.filter((b) => b.length > 0);
    if (branches.length > 0) {
      const allTypeAtRoot = branches.every((b) => b[0].path.length === 0 && b[0].code === 'invalid_type');
      if (allTypeAtRoot) {
        const expected = [...new Set(branches.map((b) => (b[0] as { expected: string }).expected))];
        return report(path, `Invalid input: expected ${expected.join(' or ')}, received ${received(valueAt(root, path))}`);
      }
      let best = branches[0];
      for (const b of branches) if (depth(b) > depth(best)) best = b;
      return describeIssue(best[0], root, path);
    }
  }
  return report(path, issue.message);
}

function depth(branch: readonly Issue[]): number {
  const first = branch[0];
  // A branch that fails on its `type` discriminator is not the one the client meant:
  // rank it below a branch that accepted the type and failed on a real field.
  const penalty = first.path[first.path.length - 1] === 'type' ? 0.5 : 0;
  return first.path.length - penalty;
}

function valueAt(root: unknown, path: Path): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function received(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'array';
  return typeof input;
}

function report(path: Path, text: string): IssueReport {
  if (path.length === 0) return { message: text, param: undefined };
  return { message: `${displayPath(path)}: ${text}`, param: dottedPath(path) };
}
