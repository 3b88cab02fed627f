/**
 * Where a process's main thread went, from a V8 `.cpuprofile` (node --cpu-prof): self time by function
 * (top frames) and by area (TLS, HTTP, the API server's folders, the controller, SQLite, GC...), as
 * shares of the busy time (idle left out). `--last-seconds S` keeps only the profile's last S seconds
 * (the steady state or join storm of `bench fleet --up-cpu-prof`, without the start of `up`).
 * `node dist/bench/cpuprofile.js FILE [--last-seconds S] [--top N]`: a table, then one JSON line.
 */
import { readFileSync } from 'node:fs';
import { parseBenchArgs } from './lib/cli.js';
import { formatTable, isMain, round } from './lib/report.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface Profile {
  nodes: { id: number; callFrame: CallFrame }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  busyMs: number;
  idleMs: number;
  /** Busy share of the wall time covered, in %: how close the main thread was to saturation. */
  busyPercent: number;
  top: { frame: string; area: string; selfMs: number; percent: number }[];
  areas: Record<string, number>;
}

/** Areas recognised by script URL (first match wins); src/ and node_modules/ are named by folder below. */
const URL_AREAS: [RegExp, string][] = [
  [/node:(internal\/)?(tls|_tls_wrap)|_tls_/, 'TLS'],
  [/node:(_http|http|internal\/http)/, 'HTTP (node)'],
  [/node:(net|stream|internal\/streams|internal\/stream_base)/, 'sockets and streams'],
  [/node:(internal\/crypto|crypto)/, 'crypto (node)'],
  [/better-sqlite3|storage\/sqlite/, 'SQLite store'],
];

/**
 * The area a frame belongs to, by its script: what a person would call it when asked where time went.
 * Native frames (no script) are shown by name: writeUtf8String and writev are socket writes, TLS
 * encryption included. The TLS handshake's own crypto runs in native code outside any JS frame and
 * shows as idle here: the main thread's CPU from /proc (bench fleet's upMainThreadCpuPercent) counts it.
 */
export function areaOf(f: CallFrame): string {
  if (f.functionName === '(garbage collector)') return 'GC';
  if (f.functionName === '(program)') return 'V8/native (program)';
  const byUrl = URL_AREAS.find(([re]) => re.test(f.url));
  if (byUrl) return byUrl[1];
  const src = /\/src\/([a-z0-9-]+)(?:\/([a-z0-9-]+))?/.exec(f.url);
  if (src) return src[1] === 'apiserver' ? `apiserver/${src[2] ?? ''}` : (src[1] ?? 'src');
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (dep) return `dependency: ${dep[1] ?? ''}`;
  if (f.url.startsWith('node:')) return 'node (other)';
  return f.url ? 'other' : `native: ${f.functionName.slice(0, 40)}`;
}

export function summarizeProfile(p: Profile, lastSeconds?: number, top = 25): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, { f: CallFrame; us: number }>();
  let t = p.startTime;
  const from = lastSeconds === undefined ? -Infinity : p.endTime - lastSeconds * 1e6;
  let idle = 0;
  let busy = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (t < from) return;
    const f = byId.get(id);
    if (!f) return;
    if (f.functionName === '(idle)') {
      idle += dt;
      return;
    }
    busy += dt;
    const key = `${(f.functionName || '(anonymous)').slice(0, 60)} ${f.url.replace(/^.*\/(src|node_modules|bench)\//, '$1/')}:${f.lineNumber + 1}`;
    const e = self.get(key) ?? { f, us: 0 };
    e.us += dt;
    self.set(key, e);
  });
  const pct = (us: number): number => round((us / Math.max(1, busy)) * 100, 1);
  const areas: Record<string, number> = {};
  for (const { f, us } of self.values()) areas[areaOf(f)] = (areas[areaOf(f)] ?? 0) + us;
  return {
    busyMs: round(busy / 1000, 0),
    idleMs: round(idle / 1000, 0),
    busyPercent: round((busy / Math.max(1, busy + idle)) * 100, 1),
    top: [...self.entries()]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([frame, { f, us }]) => ({ frame, area: areaOf(f), selfMs: round(us / 1000, 0), percent: pct(us) })),
    areas: Object.fromEntries(Object.entries(areas).sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, pct(us)])),
  };
}

if (isMain(import.meta.url)) {
  const args = parseBenchArgs(process.argv.slice(2), {
    command: 'bench/cpuprofile',
    usage: 'usage: node dist/bench/cpuprofile.js FILE [--last-seconds S] [--top N]\nWhere a .cpuprofile\'s main thread went: by area, then the top N frames by self time (default 25), over the last S seconds if given.',
    options: { 'last-seconds': { type: 'string' }, top: { type: 'string' } },
    positionals: 1,
  });
  const file = args.positionals[0] ?? args.fail('FILE is required');
  const s = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile, args.number('last-seconds', { min: 0 }), args.number('top', { min: 1, integer: true }) ?? 25);
  console.log(`busy ${s.busyMs} ms, idle ${s.idleMs} ms (main thread ${s.busyPercent}% busy)`);
  console.log(formatTable(['area', '% of busy'], Object.entries(s.areas).map(([k, v]) => [k, String(v)])));
  console.log(formatTable(['frame (self time)', 'area', 'ms', '%'], s.top.map((x) => [x.frame, x.area, String(x.selfMs), String(x.percent)])));
  console.log(JSON.stringify(s));
}
