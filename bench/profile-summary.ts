// Summarises a V8 CPU profile (node --cpu-prof, or bench:ocpp --profile): where the busy time went, by function
// and by kind of work, and the longest stretches the event loop was busy without a break (what makes a tail: a
// charger whose answer is ready waits until the stretch ends).
//   npm run bench:profile -- FILE.cpuprofile [--from S] [--to S] [--top N] [--stretches N]
// --from/--to: seconds from the profile's start (e.g. only the steady window of a run).
import fs from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

const { values: a, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: 'string' }, to: { type: 'string' }, top: { type: 'string', default: '25' }, stretches: { type: 'string', default: '10' } },
});
if (positionals.length === 0) {
  process.stderr.write('usage: bench:profile FILE.cpuprofile [--from S] [--to S] [--top N] [--stretches N]\n');
  process.exit(2);
}

/** The kind of work a frame is, from its script: the project's own code by folder, libraries by package. */
function kindOf(f: CallFrame): string {
  if (f.functionName === '(garbage collector)') return 'gc';
  if (f.functionName === '(program)') return 'program (V8/native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (pkg) return pkg[1]!;
  const own = /\/(src\/[^/]+(?:\/[^/.]+)?|simulator|bench)\//.exec(f.url);
  if (own) return own[1]!;
  if (f.url.startsWith('node:')) return f.url.replace(/^node:(internal\/)?/, 'node:').split('/').slice(0, 2).join('/');
  return f.url === '' ? 'native' : 'other';
}

const label = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules\/|src\/|simulator\/|bench\/)/, '$1')}:${f.lineNumber + 1}`;
const ms = (us: number) => (us / 1000).toFixed(1);

for (const file of positionals) {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** the frame just under the root: the kind of task (timer, socket read, microtasks, …) a sample belongs to */
  const entry = (id: number): CallFrame => {
    let cur = id;
    for (;;) {
      const up = parent.get(cur);
      if (up === undefined || parent.get(up) === undefined) return byId.get(cur)!.callFrame;
      cur = up;
    }
  };
  const from = a.from ? Number(a.from) * 1e6 : 0;
  const to = a.to ? Number(a.to) * 1e6 : Infinity;
  const self = new Map<string, number>();
  const kinds = new Map<string, number>();
  let busy = 0;
  let window = 0;
  const stretches: { at: number; us: number; fns: Map<string, number>; entries: Map<string, number> }[] = [];
  let cur: (typeof stretches)[number] | null = null;
  let t = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < from || t > to) continue;
    // a sample's weight is the time until the next one (the profiler's own interval, ~1 ms)
    const w = p.timeDeltas[i + 1] ?? 0;
    window += w;
    const node = byId.get(p.samples[i]!)!;
    if (node.callFrame.functionName === '(idle)') {
      if (cur) stretches.push(cur);
      cur = null;
      continue;
    }
    busy += w;
    const fn = label(node.callFrame);
    self.set(fn, (self.get(fn) ?? 0) + w);
    const kind = kindOf(node.callFrame);
    kinds.set(kind, (kinds.get(kind) ?? 0) + w);
    cur ??= { at: t, us: 0, fns: new Map(), entries: new Map() };
    cur.us += w;
    cur.fns.set(fn, (cur.fns.get(fn) ?? 0) + w);
    const e = label(entry(node.id));
    cur.entries.set(e, (cur.entries.get(e) ?? 0) + w);
  }
  if (cur) stretches.push(cur);
  const top = (m: Map<string, number>, n: number) => [...m.entries()].sort((x, y) => y[1] - x[1]).slice(0, n);
  const pct = (v: number) => ((v / Math.max(1, busy)) * 100).toFixed(1).padStart(5);
  console.log(`\n# ${file}`);
  console.log(`window ${ms(window)} ms, busy ${ms(busy)} ms (${((busy / Math.max(1, window)) * 100).toFixed(1)} % of the window)`);
  console.log('\n## busy time by kind');
  for (const [k, v] of top(kinds, 40)) console.log(`${pct(v)} %  ${ms(v).padStart(9)} ms  ${k}`);
  console.log(`\n## busy time by function (self), top ${a.top}`);
  for (const [k, v] of top(self, Number(a.top))) console.log(`${pct(v)} %  ${ms(v).padStart(9)} ms  ${k}`);
  const lengths = stretches.map((s) => s.us).sort((x, y) => x - y);
  const q = (f: number) => ms(lengths[Math.min(lengths.length - 1, Math.floor(f * lengths.length))] ?? 0);
  console.log(`\n## busy stretches (no idle sample between): ${lengths.length}, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms`);
  for (const s of [...stretches].sort((x, y) => y.us - x.us).slice(0, Number(a.stretches))) {
    console.log(`- at ${(s.at / 1e6).toFixed(2)} s: ${ms(s.us)} ms; tasks: ${top(s.entries, 3).map(([k, v]) => `${k} ${ms(v)}`).join('; ')}`);
    console.log(`    self: ${top(s.fns, 5).map(([k, v]) => `${k} ${ms(v)}`).join('; ')}`);
  }
}
