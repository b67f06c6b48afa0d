import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface FuzzOptions {
  st: string;
  baseUrl: string;
  apiKey: string;
  adminToken: string;
  /** Time budget of the run (schemathesis --max-time). */
  maxSeconds: number;
  /** Test cases per operation and phase. */
  maxExamples: number;
  workers: number;
  seed?: string;
  /** Only the operations whose path matches this regular expression. */
  includePath?: string;
  log?: (line: string) => void;
}

export interface FuzzFailure {
  check: string;
  operation: string;
  title: string;
  message: string;
  reproduce?: string;
}

export interface FuzzResult {
  exitCode: number | null;
  seed: string;
  operations: number;
  testCases: number;
  requests: number;
  /** Status classes of every answer, e.g. { '2xx': 310, '4xx': 1200 }. */
  statuses: Record<string, number>;
  /** Spec-prescribed 503 no_channel_available answers (a model sent to an endpoint that has no channel for it). */
  noChannel503: number;
  failures: FuzzFailure[];
  /** Errors on schemathesis' side (its own generation), listed but not the gateway's fault. */
  toolErrors: string[];
  /** Errors that are the gateway's fault (a connection refused or reset, a timeout). */
  fatalErrors: string[];
  stopReason: string;
  output: string;
}

type Ev = Record<string, any>;

/** Error types of a request that got no answer: refused, reset or cut connections, timeouts. */
const GOT_NO_ANSWER = /Connection|Timeout|Remote|Chunked|Protocol|Reset|Refused|Incomplete/i;

/**
 * One schemathesis run against a gateway: the document at `/openapi.json`,
 * every phase (examples, coverage, fuzzing, stateful), the built-in checks
 * set in schemathesis.toml and the gateway's own (gateway_checks.py), with an
 * API key (x-api-key) and the admin token (Authorization) on every request.
 * The NDJSON event stream is read for the figures and the failures.
 */
export async function runSchemathesis(o: FuzzOptions): Promise<FuzzResult> {
  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-fuzz-'));
  const ndjson = path.join(reportDir, 'events.ndjson');
  const args = [
    '--config-file', path.join(here, 'schemathesis.toml'),
    'run', `${o.baseUrl}/openapi.json`,
    '--url', o.baseUrl,
    '-H', `x-api-key: ${o.apiKey}`,
    '-H', `Authorization: Bearer ${o.adminToken}`,
    '--generation-with-security-parameters', 'false',
    '--max-time', String(o.maxSeconds),
    '--max-examples', String(o.maxExamples),
    '--workers', String(o.workers),
    '--request-timeout', '120',
    '--report', 'ndjson', '--report-ndjson-path', ndjson,
    '--no-color',
    ...(o.seed ? ['--seed', o.seed] : []),
    ...(o.includePath ? ['--include-path-regex', o.includePath] : []),
  ];
  const env = {
    ...process.env,
    SCHEMATHESIS_HOOKS: 'gateway_checks',
    PYTHONPATH: [here, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
    PYTHONDONTWRITEBYTECODE: '1',
  };
  let output = '';
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(o.st, args, { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: reportDir });
    const take = (d: Buffer) => {
      output += d.toString();
      for (const line of d.toString().split('\n')) if (/^\s*(✅|❌|🚫|⏭|Test cases:|Seed:|=+ .* =+$)/u.test(line)) o.log?.(`  [schemathesis] ${line.trim()}`);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  try {
    return { ...summarise(fs.existsSync(ndjson) ? fs.readFileSync(ndjson, 'utf8') : ''), exitCode, output };
  } finally {
    fs.rmSync(reportDir, { recursive: true, force: true });
  }
}

function summarise(text: string): Omit<FuzzResult, 'exitCode' | 'output'> {
  const r: Omit<FuzzResult, 'exitCode' | 'output'> = {
    seed: '', operations: 0, testCases: 0, requests: 0, statuses: {}, noChannel503: 0, failures: [], toolErrors: [], fatalErrors: [], stopReason: '',
  };
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const ev = JSON.parse(line) as Ev;
    const [kind, v] = Object.entries(ev)[0] as [string, Ev];
    // The seed is a 128-bit integer: read its digits, not a float.
    if (kind === 'Initialize') r.seed = /"seed":\s*(\d+)/.exec(line)?.[1] ?? String(v.seed);
    else if (kind === 'LoadingFinished') r.operations = v.statistic?.operations?.selected ?? 0;
    else if (kind === 'EngineFinished') r.stopReason = String(v.stop_reason ?? '');
    else if (kind === 'NonFatalError' || kind === 'FatalError') {
      const what = `${v.label ?? ''} ${v.value?.type ?? ''}: ${v.value?.message ?? ''}`.trim();
      // A request that got no answer is the gateway's fault; anything else (Hypothesis' flakiness reports,
      // errors inside schemathesis' own data generation) is listed but is not.
      if (GOT_NO_ANSWER.test(String(v.value?.type ?? ''))) r.fatalErrors.push(what);
      else r.toolErrors.push(what);
    } else if (kind === 'ScenarioFinished') {
      const rec = v.recorder ?? {};
      r.testCases += Object.keys(rec.cases ?? {}).length;
      for (const inter of Object.values(rec.interactions ?? {}) as Ev[]) {
        const status = inter.response?.status_code as number | undefined;
        r.requests++;
        if (status === undefined) continue;
        const cls = `${Math.floor(status / 100)}xx`;
        r.statuses[cls] = (r.statuses[cls] ?? 0) + 1;
        if (status === 503) r.noChannel503++;
      }
      for (const checks of Object.values(rec.checks ?? {}) as Ev[][]) {
        for (const c of checks) {
          if (String(c.status).toLowerCase() !== 'failure') continue;
          const f = c.failure_info?.failure ?? {};
          const failure: FuzzFailure = { check: c.name, operation: rec.label, title: f.title ?? '', message: String(f.message ?? '').slice(0, 600), reproduce: c.failure_info?.code_sample };
          const key = `${failure.check}|${failure.operation}|${failure.title}|${failure.message.split('\n')[0].slice(0, 80)}`;
          if (seen.has(key)) continue;
          seen.add(key);
          r.failures.push(failure);
        }
      }
    }
  }
  return r;
}
