/**
 * Where the CPU of a process went, per request: a V8 CPU profile
 * (`node --cpu-prof`) cut to the time windows of a benchmark's phases and
 * its self time summed by owner (a project file, a package, Node's core, GC,
 * V8's own work), divided by the requests of the phase. `dev/bench/chat.ts`
 * writes the windows (`phases.json`, CLOCK_MONOTONIC microseconds, the clock
 * V8 stamps its samples with) beside the profile when BENCH_CPU_PROF=1.
 *   npx tsx dev/bench/lib/profile-summary.ts <dir with *.cpuprofile and phases.json> [top=25]
 * In the compiled gateway (one esbuild bundle) a function is attributed to
 * the project file whose `// path.ts` marker precedes it in the bundle.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame }
interface Profile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }
export interface Phase { label: string; startUs: number; endUs: number; requests: number }

const bundleMarkers = new Map<string, Array<[line: number, file: string]>>();
function bundleFile(url: string, line: number): string | undefined {
  let markers = bundleMarkers.get(url);
  if (!markers) {
    markers = [];
    try {
      const text = fs.readFileSync(url.startsWith('file:') ? fileURLToPath(url) : url, 'utf8').split('\n');
      text.forEach((l, i) => {
        const m = /^\/\/ ([\w./@-]+\.(?:ts|js|mjs|json))$/.exec(l);
        if (m) markers!.push([i, m[1]]);
      });
    } catch {
      // not readable: attributed to the bundle itself
    }
    bundleMarkers.set(url, markers);
  }
  let found: string | undefined;
  for (const [at, file] of markers) {
    if (at > line) break;
    found = file;
  }
  return found;
}

/** Who owns a frame: `gc`, `v8 (program)`, `native <fn>`, `node:<module>`, `pkg <name>`, or a project file. */
export function ownerOf(f: CallFrame): string {
  if (f.functionName === '(garbage collector)') return 'gc';
  if (f.functionName === '(program)') return 'v8 (program)';
  if (f.functionName === '(idle)') return 'idle';
  if (f.functionName === '(root)') return 'root';
  if (!f.url) return `native ${f.functionName || '(anonymous)'}`;
  if (f.url.startsWith('node:')) return f.url;
  const nm = f.url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = f.url.slice(nm + '/node_modules/'.length).split('/');
    return `pkg ${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (/\/dist\/[\w-]+\.mjs$/.test(f.url)) return bundleFile(f.url, f.lineNumber) ?? path.basename(f.url);
  const root = process.cwd();
  const file = f.url.startsWith('file:') ? fileURLToPath(f.url) : f.url;
  return file.startsWith(root) ? path.relative(root, file) : file;
}

/** Broad groups of owners, for the one-line answer to "where did a request's time go". */
export function groupOf(owner: string): string {
  if (owner === 'gc') return 'GC';
  if (owner === 'v8 (program)') return 'V8 other (program)';
  if (owner.startsWith('native ')) return 'native (JSON, builtins, syscall wrappers)';
  if (owner.startsWith('node:')) {
    if (/net|stream|_http|http|tls|dns/.test(owner)) return 'Node core: sockets, streams, http';
    if (/timers|process\/task_queues|promises|async_hooks|events/.test(owner)) return 'Node core: microtasks, timers, events';
    return 'Node core: other';
  }
  if (owner.startsWith('pkg ')) return owner;
  return 'project code';
}

export function summarise(profile: Profile, phase: Phase | undefined) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  let t = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i];
    t += dt;
    if (phase && (t < phase.startUs || t > phase.endUs)) continue;
    const node = byId.get(profile.samples[i]);
    if (!node) continue;
    const owner = ownerOf(node.callFrame);
    if (owner === 'idle') continue;
    // A sample's time is the gap to the next one; `timeDeltas[i]` is the gap before it, a fair stand-in at a fixed rate.
    owners.set(owner, (owners.get(owner) ?? 0) + dt);
    const fn = `${node.callFrame.functionName || '(anonymous)'} [${owner}]`;
    functions.set(fn, (functions.get(fn) ?? 0) + dt);
    total += dt;
  }
  return { owners, functions, total };
}

function print(label: string, s: ReturnType<typeof summarise>, requests: number, top: number) {
  const per = (us: number) => (requests > 0 ? `${(us / requests).toFixed(1).padStart(7)} us/req` : `${(us / 1000).toFixed(1).padStart(8)} ms`);
  console.log(`\n== ${label}: ${(s.total / 1000).toFixed(0)} ms of CPU over ${requests} requests = ${requests ? (s.total / requests).toFixed(1) : '-'} us per request`);
  const groups = new Map<string, number>();
  for (const [o, us] of s.owners) groups.set(groupOf(o), (groups.get(groupOf(o)) ?? 0) + us);
  console.log('  by group:');
  for (const [g, us] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`    ${per(us)}  ${g}`);
  console.log('  by owner:');
  for (const [o, us] of [...s.owners].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${per(us)}  ${o}`);
  console.log('  by function:');
  for (const [f, us] of [...s.functions].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${per(us)}  ${f}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // A directory (its newest profile, phases.json in it) or one profile file (phases.json beside it or one level up).
  const arg = process.argv[2] ?? '.data/bench-prof';
  const top = Number(process.argv[3] ?? 25);
  const isFile = arg.endsWith('.cpuprofile');
  const dir = isFile ? path.dirname(arg) : arg;
  const files = isFile ? [arg] : fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(dir, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
  const profile = JSON.parse(fs.readFileSync(files[0], 'utf8')) as Profile;
  const phasesFile = [path.join(dir, 'phases.json'), path.join(dir, '..', 'phases.json')].find((f) => fs.existsSync(f)) ?? path.join(dir, 'phases.json');
  const phases = fs.existsSync(phasesFile) ? (JSON.parse(fs.readFileSync(phasesFile, 'utf8')) as Phase[]) : [];
  console.log(`profile ${files[0]}`);
  if (phases.length === 0) print('whole profile', summarise(profile, undefined), 0, top);
  for (const phase of phases) print(phase.label, summarise(profile, phase), phase.requests, top);
}
