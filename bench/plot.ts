/**
 * SVG plots for docs/performance.md, drawn from bench JSON (never by hand):
 * - perf-rounds.svg: end-to-end CSRs/s (closed loop) and create->issued p99 at 100 CSRs/s, round by
 *   round: rounds 1-3 from docs/bench/rounds.json (transcribed from docs/performance.md), round 4
 *   from an `e2e` run's output;
 * - perf-fixed-rate.svg: create->issued p50/p90/p99 at fixed rates, from one `e2e --rate=R` output each.
 * - perf-fleet.svg: cost against fleet size from `bench fleet` results (a directory `bench fleet --out DIR`
 *   wrote, or files): up's CPU in steady state per 1,000 nodes and per joining node, its peak RSS per
 *   1,000 nodes, and the p99s of mutating calls, Lease renewals, gets and lists against the SLOs.
 * Each input is what `node dist/bench/run.js e2e [--runs=N]` (or `fleet`) prints (the JSON line is found
 * in it); with --runs the median is the point and the bar is the range over the runs.
 * Run: `node dist/bench/plot.js [--round4=E2E.out] [--fixed=R50.out,R100.out,R200.out,R400.out] [--fleet=DIR|F100.json,...] [--out=docs]`;
 * each figure is drawn only when its inputs are given.
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseBenchArgs } from './lib/cli.js';
import { isMain } from './lib/report.js';
import { numericLeaves, type RunsResult, type Spread } from './lib/runs.js';
import { line, svgDocument, text } from './lib/svg.js';

interface RoundPoint {
  label: string;
  csrsPerSec: Spread;
  p99At100Ms: Spread;
}

/** The JSON object of benchmark `name` in a bench output (the one line that parses as its result). */
export function readBenchOutput(file: string, name = 'e2e'): object {
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith('{'));
  for (const line of lines.reverse()) {
    const obj = JSON.parse(line) as { name?: string };
    if (obj.name === name) return obj;
  }
  throw new Error(`no ${name} result in ${file}`);
}

/** A figure by its path: from a --runs summary, or the single value of one run. */
export function figure(result: object, figurePath: string): Spread {
  const summary = (result as Partial<RunsResult>).summary;
  const s = summary?.[figurePath];
  if (s) return s;
  const v = numericLeaves(result).get(figurePath);
  if (v === undefined) throw new Error(`no ${figurePath} in the bench result`);
  return { median: v, min: v, max: v };
}

const W = 420;
const H = 300;
const M = { left: 64, right: 16, top: 40, bottom: 56 };

type Scale = (v: number) => number;

const linear = (max: number): Scale => (v) => H - M.bottom - (v / max) * (H - M.top - M.bottom);
const logScale = (min: number, max: number): Scale => (v) =>
  H - M.bottom - ((Math.log10(Math.max(v, min)) - Math.log10(min)) / (Math.log10(max) - Math.log10(min))) * (H - M.top - M.bottom);

/** One panel: y axis with ticks, a category or numeric x axis, a title. */
interface Frame {
  title: string;
  yLabel: string;
  ticks: number[];
  y: Scale;
  xLabels: { x: number; label: string }[];
  width?: number;
}

function frame({ title, yLabel, ticks, y, xLabels, width = W }: Frame): string[] {
  const out = [text(width / 2, 20, title, 'text-anchor="middle" font-weight="bold"')];
  out.push(line(M.left, M.top, M.left, H - M.bottom, '#333'));
  out.push(line(M.left, H - M.bottom, width - M.right, H - M.bottom, '#333'));
  for (const t of ticks) {
    out.push(line(M.left - 4, y(t), width - M.right, y(t), '#ddd'));
    out.push(text(M.left - 6, y(t) + 4, String(t), 'text-anchor="end"'));
  }
  for (const { x, label } of xLabels) out.push(text(x, H - M.bottom + 16, label, 'text-anchor="middle"'));
  out.push(text(14, H / 2, yLabel, `text-anchor="middle" transform="rotate(-90 14 ${H / 2})"`));
  return out;
}

/** A range bar with its median dot (no dot when the median was not reported). */
function rangeMark(x: number, s: Spread, y: Scale, color: string): string[] {
  const out = [line(x, y(s.min), x, y(s.max), `${color} stroke-width="6" stroke-opacity="0.35"`)];
  // Rounds whose median was not reported carry null (docs/bench/rounds.json).
  if (typeof s.median === 'number') out.push(`<circle cx="${x}" cy="${y(s.median).toFixed(1)}" r="4" fill="${color}"/>`);
  return out;
}

function svg(panels: string[][], note: string, panelWidth = W): string {
  const width = panelWidth * panels.length;
  const body = panels.map((p, i) => `<g transform="translate(${i * panelWidth},0)">${p.join('')}</g>`).join('');
  return svgDocument(width, H + 20, `${body}${text(8, H + 12, note, 'fill="#555" font-size="11"')}`);
}

export function roundsSvg(rounds: RoundPoint[]): string {
  const step = (W - M.left - M.right) / rounds.length;
  const xs = rounds.map((_, i) => M.left + step * (i + 0.5));
  const labels = rounds.map((r, i) => ({ x: xs[i] ?? 0, label: r.label }));
  const maxRate = Math.max(...rounds.map((r) => r.csrsPerSec.max), 1000);
  const yRate = linear(maxRate * 1.05);
  const rate = frame({ title: 'End to end, closed loop (CSRs/s)', yLabel: 'CSRs/s', ticks: [0, 250, 500, 750, 1000].filter((t) => t <= maxRate * 1.05), y: yRate, xLabels: labels });
  rate.push(line(M.left, yRate(1000), W - M.right, yRate(1000), '#2a2 stroke-dasharray="4 3"'), text(W - M.right, yRate(1000) - 4, 'target 1,000/s', 'text-anchor="end" fill="#2a2"'));
  rounds.forEach((r, i) => rate.push(...rangeMark(xs[i] ?? 0, r.csrsPerSec, yRate, '#1f5fa8'), text((xs[i] ?? 0) + 8, yRate(r.csrsPerSec.max) - 4, String(r.csrsPerSec.median ?? ''))));
  const yP99 = logScale(1, 100_000);
  const p99 = frame({ title: 'p99 create->issued at 100 CSRs/s (ms, log)', yLabel: 'ms', ticks: [1, 10, 100, 1000, 10000, 100000], y: yP99, xLabels: labels });
  p99.push(line(M.left, yP99(50), W - M.right, yP99(50), '#2a2 stroke-dasharray="4 3"'), text(W - M.right, yP99(50) - 4, 'target 50 ms', 'text-anchor="end" fill="#2a2"'));
  rounds.forEach((r, i) => p99.push(...rangeMark(xs[i] ?? 0, r.p99At100Ms, yP99, '#b5401f')));
  return svg([rate, p99], 'Dot: median over runs; bar: range over runs. Rounds 1-3 from docs/bench/rounds.json; round 4 from a bench e2e run (bench/plot.ts).');
}

export interface FixedRatePoint {
  rate: number;
  p50: Spread;
  p90: Spread;
  p99: Spread;
  issuedPerSec: Spread;
}

export function fixedRateSvg(points: FixedRatePoint[]): string {
  const maxRate = Math.max(...points.map((p) => p.rate));
  const wide = W * 1.5;
  const x = (r: number): number => M.left + 20 + (r / maxRate) * (wide - M.left - M.right - 40);
  const y = logScale(1, 100_000);
  const title = 'create->issued latency at fixed rates (ms, log)';
  const panel = frame({ title, yLabel: 'ms', ticks: [1, 10, 100, 1000, 10000, 100000], y, xLabels: points.map((p) => ({ x: x(p.rate), label: `${p.rate}/s` })), width: wide });
  const series: ['p50' | 'p90' | 'p99', string][] = [['p50', '#1f5fa8'], ['p90', '#7a3fa8'], ['p99', '#b5401f']];
  series.forEach(([key, color], si) => {
    const pts = points.map((p) => `${x(p.rate).toFixed(1)},${y(p[key].median).toFixed(1)}`).join(' ');
    panel.push(`<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const p of points) panel.push(...rangeMark(x(p.rate), p[key], y, color));
    panel.push(text(wide - M.right - 60, M.top + 14 * si, key, `fill="${color}" font-weight="bold"`));
  });
  for (const p of points) panel.push(text(x(p.rate), H - M.bottom + 30, `served ${p.issuedPerSec.median}/s`, 'text-anchor="middle" fill="#555" font-size="10"'));
  return svg([panel], 'Median over runs (line, dot) and range (bar) at each offered rate; from bench e2e --rate=R runs (bench/plot.ts).', wide);
}

/** What perf-fleet.svg shows of one `bench fleet` result. */
export interface FleetPoint {
  nodes: number;
  /** up's CPU in steady state, in % of a core per 1,000 nodes. */
  steadyCpuPer1000: number;
  /** up's CPU per node in the join storm, in ms. */
  joinCpuMsPerNode: number;
  /** up's peak RSS over the run, in MB per 1,000 nodes. */
  rssMbPer1000: number;
  mutatingP99Ms: number;
  leaseRenewP99Ms: number;
  getP99Ms: number;
  listP99Ms: number;
}

/** The point of one `bench fleet` result (what `--out DIR` writes, or a saved output). */
export function fleetPoint(r: object): FleetPoint {
  const v = (p: string, fallback?: number): number => {
    try {
      return figure(r, p).median;
    } catch (err) {
      if (fallback === undefined) throw err;
      return fallback;
    }
  };
  const nodes = v('nodes');
  return {
    nodes,
    steadyCpuPer1000: v('cpuPercentPer1000Nodes'),
    joinCpuMsPerNode: v('phases.join.upCpuMsPerNode', 0),
    rssMbPer1000: Math.round((v('peakRssMb.apiserver') * 1000) / nodes),
    mutatingP99Ms: v('mutatingP99Ms'),
    leaseRenewP99Ms: v('leaseRenewP99Ms'),
    getP99Ms: v('getP99Ms'),
    listP99Ms: v('listP99Ms'),
  };
}

/** The fleet results named by `--fleet`: files, or directories whose fleet-N.json (as `bench fleet --out` writes) are all read. */
export function fleetFiles(args: string[]): string[] {
  return args.flatMap((a) =>
    statSync(a).isDirectory()
      ? readdirSync(a)
          .filter((f) => /^fleet-\d+\.json$/.test(f))
          .map((f) => path.join(a, f))
      : [a],
  );
}

export function fleetSvg(points: FleetPoint[]): string {
  const step = (W - M.left - M.right) / points.length;
  const xs = points.map((_, i) => M.left + step * (i + 0.5));
  const xLabels = points.map((p, i) => ({ x: xs[i] ?? 0, label: String(p.nodes) }));
  const bars = (title: string, yLabel: string, value: (p: FleetPoint) => number, color: string): string[] => {
    const max = Math.max(...points.map(value), 1) * 1.15;
    const y = linear(max);
    const tick = 10 ** Math.floor(Math.log10(max));
    const panel = frame({ title, yLabel, ticks: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => k * tick).filter((t) => t <= max), y, xLabels });
    points.forEach((p, i) => {
      const x = xs[i] ?? 0;
      panel.push(line(x, y(0), x, y(value(p)), `${color} stroke-width="14"`), text(x, y(value(p)) - 4, String(value(p)), 'text-anchor="middle"'));
    });
    return panel;
  };
  const yP99 = logScale(1, 1_000_000);
  const latency = frame({ title: 'p99 over the run (ms, log)', yLabel: 'ms', ticks: [1, 10, 100, 1000, 10000, 100000, 1000000], y: yP99, xLabels });
  latency.push(line(M.left, yP99(1000), W - M.right, yP99(1000), '#2a2 stroke-dasharray="4 3"'), text(W - M.right, yP99(1000) - 4, 'SLO 1 s (list: 30 s)', 'text-anchor="end" fill="#2a2"'));
  const series: [keyof FleetPoint, string, string][] = [
    ['mutatingP99Ms', '#b5401f', 'mutating'],
    ['leaseRenewP99Ms', '#1f5fa8', 'Lease renewal'],
    ['getP99Ms', '#2a8a2a', 'get'],
    ['listP99Ms', '#7a3fa8', 'list'],
  ];
  series.forEach(([key, color, label], si) => {
    latency.push(`<polyline points="${points.map((p, i) => `${(xs[i] ?? 0).toFixed(1)},${yP99(p[key]).toFixed(1)}`).join(' ')}" fill="none" stroke="${color}" stroke-width="2"/>`);
    latency.push(text(M.left + 8, M.top + 14 * si, label, `fill="${color}" font-weight="bold"`));
  });
  return svg(
    [
      bars("up's CPU, steady (% of a core per 1,000 nodes)", '%', (p) => p.steadyCpuPer1000, '#1f5fa8'),
      bars("up's CPU per joining node (ms)", 'ms', (p) => p.joinCpuMsPerNode, '#2a8a2a'),
      bars("up's peak RSS per 1,000 nodes (MB)", 'MB', (p) => p.rssMbPer1000, '#7a3fa8'),
      latency,
    ],
    'x: simulated nodes; one bench fleet run per point, simulator and up on the same 2 cores; from docs/bench JSON by bench/plot.ts --fleet.',
  );
}

function main(argv: string[]): void {
  const text = { type: 'string' } as const;
  const args = parseBenchArgs(argv, {
    command: 'bench/plot',
    usage: `usage: node dist/bench/plot.js [--out=DIR] [--round4=FILE [--rounds=FILE]] [--fixed=FILE,...] [--fleet=DIR|FILE,...]
Draws into DIR (default docs): perf-rounds.svg from round 4's e2e JSON and the earlier rounds (default docs/bench/rounds.json),
perf-fixed-rate.svg from e2e --rate runs, perf-fleet.svg from bench fleet JSON.`,
    options: { out: text, round4: text, rounds: text, fixed: text, fleet: text },
  });
  const flag = (name: string): string | undefined => args.string(name);
  const out = flag('out') ?? 'docs';
  // perf-rounds.svg only when its round 4 is given: without it the plot would lose that round.
  const round4 = flag('round4');
  if (round4) {
    const rounds = (JSON.parse(readFileSync(flag('rounds') ?? 'docs/bench/rounds.json', 'utf8')) as { rounds: RoundPoint[] }).rounds;
    const r = readBenchOutput(round4);
    rounds.push({ label: 'round 4', csrsPerSec: figure(r, 'sustained.csrsPerSec'), p99At100Ms: figure(r, 'fixedRate.latencyMs.p99') });
    writeFileSync(path.join(out, 'perf-rounds.svg'), roundsSvg(rounds));
  }
  const fixed = flag('fixed')?.split(',') ?? [];
  if (fixed.length > 0) {
    const points = fixed.map((file) => {
      const r = readBenchOutput(file);
      const f = (p: string): Spread => figure(r, `fixedRate.${p}`);
      return { rate: f('offeredPerSec').median, p50: f('latencyMs.p50'), p90: f('latencyMs.p90'), p99: f('latencyMs.p99'), issuedPerSec: f('csrsPerSec') };
    });
    writeFileSync(path.join(out, 'perf-fixed-rate.svg'), fixedRateSvg(points.sort((a, b) => a.rate - b.rate)));
  }
  const fleet = fleetFiles(flag('fleet')?.split(',') ?? []);
  if (fleet.length > 0) {
    const points = fleet.map((file) => fleetPoint(readBenchOutput(file, 'fleet')));
    writeFileSync(path.join(out, 'perf-fleet.svg'), fleetSvg(points.sort((a, b) => a.nodes - b.nodes)));
  }
}

if (isMain(import.meta.url)) main(process.argv.slice(2));
