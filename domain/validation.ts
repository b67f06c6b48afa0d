import type { z } from 'zod';
import { errors, type GatewayError } from './errors';

/**
 * The one validation path of every request input (body, query, path
 * parameters): zod parses, the first issue becomes one 400 `invalid_request`
 * whose message names the field and whose `param` is its dotted path. The
 * HTTP helpers over it are in gateway/middleware/validate.ts; protocol bodies
 * (protocols/parse-request.ts) use it too.
 */
export type InputKind = 'body' | 'query' | 'params';

export function parseInput<S extends z.ZodType>(kind: InputKind, schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalidInput(kind, result.error, value);
}

/** The 400 for a failed parse: `messages[0].role: Invalid option: ...`, `from: must be ...`, `model is required`. */
export function invalidInput(kind: InputKind, error: z.ZodError, value: unknown): GatewayError {
  const issue = error.issues[0];
  const { message, param } = describeIssue(issue, value);
  if (param === undefined && kind !== 'body') return errors.invalidRequest(`${kind}: ${message}`);
  return errors.invalidRequest(message, param);
}

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
  return report(path, issue.message, issue);
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

function report(path: Path, text: string, issue?: Issue): IssueReport {
  if (path.length === 0) return { message: text, param: undefined };
  if (issue && isMissing(issue)) return { message: `${displayPath(path)} is required`, param: dottedPath(path) };
  return { message: `${displayPath(path)}: ${text}`, param: dottedPath(path) };
}

/** A field that was not sent at all (zod reports it as `received undefined`). */
function isMissing(issue: Issue): boolean {
  return issue.code === 'invalid_type' && /received undefined$/.test(issue.message);
}
