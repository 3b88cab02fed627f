/**
 * Paired A/B of two builds' API servers: `node dist/bench/run.js api-ab [--against=DIR]` starts this
 * build's `kube-identity apiserver` (B) and the one built in DIR (A: a worktree or clone holding
 * `dist/`; without it, this build again, an A/A run that shows the noise floor), both on SQLite at
 * the same time, and every client sends its requests to them in turn. Both servers see the same
 * machine at the same moment, so on a shared host whose load swings 2x between back-to-back runs
 * the ratio of their CPU per request (B ÷ A, from /proc) stays steady where alternated runs do not.
 * Phases as `bench api`'s: ConfigMap creates, GETs of them, TokenReviews of a Secret-bound token.
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { boundToken, configMap, NAMESPACE, pad, reviewBody } from './api.js';
import { startApiServerProcess, type ApiServerProcess, type ApiServerProcessOptions } from './lib/apiserver-process.js';
import { HttpClient } from './lib/http-client.js';
import { formatTable, isMain, machine, mb, printResult, round, type Machine } from './lib/report.js';
import { parseBenchArgs } from './lib/cli.js';

export interface ApiAbParams {
  objects: number;
  concurrency: number;
  getMs: number;
  reviewConcurrency: number;
  reviewMs: number;
}

export const API_AB_DEFAULTS: ApiAbParams = { objects: 10_000, concurrency: 16, getMs: 8000, reviewConcurrency: 32, reviewMs: 8000 };

export interface AbPhase {
  /** Server CPU µs per request of A and of B, and B ÷ A (below 1: B is cheaper). */
  cpuUsPerOp: { a: number; b: number };
  bToA: number;
  /** Requests each server answered (the same, give or take one). */
  done: { a: number; b: number };
  /** The host's 1-minute load average when the phase ended. */
  load: number;
}

/** Node flags for one side's server process (e.g. `--max-semi-space-size=16` on B, to A/B a V8 setting). */
export interface ApiAbNodeFlags {
  a?: string[];
  b?: string[];
}

export interface ApiAbResult extends Machine {
  name: 'api-ab';
  params: ApiAbParams;
  /** Which build A is: its checkout's commit ('this build' for an A/A run), never a path on the machine. */
  a: string;
  nodeFlags: ApiAbNodeFlags;
  results: { create: AbPhase; get: AbPhase; tokenreview: AbPhase };
  peakRssMb: { a: number; b: number };
}

type Start = (opts?: ApiServerProcessOptions) => Promise<ApiServerProcess>;

interface Side {
  server: ApiServerProcess;
  client: HttpClient;
  token: string;
}

async function loadAverage(): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  return Number((await readFile('/proc/loadavg', 'utf8')).split(' ')[0]);
}

/** Runs `op` on A and B in turn from `concurrency` clients until `maxOps` each or `maxMs`; every request must succeed. */
export async function paired<S extends { server: ApiServerProcess }>(
  sides: [S, S],
  concurrency: number,
  maxOps: number,
  maxMs: number,
  op: (s: S, i: number) => Promise<void>,
): Promise<AbPhase> {
  const before = sides.map((s) => s.server.proc.cpuMs());
  const done = [0, 0];
  let next = 0;
  const deadline = performance.now() + maxMs;
  const client = async (): Promise<void> => {
    while (next < maxOps * 2 && performance.now() < deadline) {
      const i = next++;
      const k = i % 2;
      await op(sides[k] as S, Math.floor(i / 2));
      done[k] = (done[k] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const [a, b] = sides.map((s, k) => round(((s.server.proc.cpuMs() - (before[k] ?? 0)) * 1000) / Math.max(1, done[k] ?? 0), 1)) as [number, number];
  return { cpuUsPerOp: { a, b }, bToA: a > 0 ? round(b / a) : 0, done: { a: done[0] ?? 0, b: done[1] ?? 0 }, load: await loadAverage() };
}

async function startSide(start: Start, execArgv: string[] | undefined): Promise<Side> {
  const server = await start({ execArgv });
  const client = new HttpClient(server.admin);
  await client.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  return { server, client, token: await boundToken(client) };
}

/** A's build named by the commit its checkout is at (results are shipped in docs/, paths are not). */
export function buildOf(dir: string): string {
  try {
    return `commit ${execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()}`;
  } catch {
    return 'another build (not a git checkout)';
  }
}

export async function runApiAbBench(params: Partial<ApiAbParams> = {}, against?: string, nodeFlags: ApiAbNodeFlags = {}): Promise<ApiAbResult> {
  const p: ApiAbParams = { ...API_AB_DEFAULTS, ...params };
  const startA: Start = against
    ? ((await import(pathToFileURL(path.resolve(against, 'dist/bench/lib/apiserver-process.js')).href)) as { startApiServerProcess: Start }).startApiServerProcess
    : startApiServerProcess;
  const started: Side[] = [];
  try {
    started.push(await startSide(startA, nodeFlags.a), await startSide(startApiServerProcess, nodeFlags.b));
    const sides = started as [Side, Side];
    const collection = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
    const create = await paired(sides, p.concurrency, p.objects, 300_000, (s, i) => s.client.json('POST', collection, configMap(`cm-${pad(i)}`)).then(() => undefined));
    const get = await paired(sides, p.concurrency, Number.MAX_SAFE_INTEGER, p.getMs, (s, i) => s.client.json('GET', `${collection}/cm-${pad((i * 7919) % p.objects)}`).then(() => undefined));
    const tokenreview = await paired(sides, p.reviewConcurrency, Number.MAX_SAFE_INTEGER, p.reviewMs, async (s) => {
      const r = await s.client.json<{ status?: { authenticated?: boolean; error?: string } }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', reviewBody(s.token));
      if (r.status?.authenticated !== true) throw new Error(`TokenReview refused the bound token: ${r.status?.error ?? ''}`);
    });
    const [a, b] = sides.map((s) => mb(s.server.proc.memory().peakRss)) as [number, number];
    return { name: 'api-ab', params: p, a: against ? buildOf(against) : 'this build', nodeFlags, results: { create, get, tokenreview }, peakRssMb: { a, b }, ...machine() };
  } finally {
    for (const s of started) {
      s.client.close();
      await s.server.close();
    }
  }
}

/** `--node-flags-a`/`-b`: space-separated node flags for that side's server. */
export function abNodeFlags(a: string | undefined, b: string | undefined): ApiAbNodeFlags {
  const split = (f: string | undefined): string[] | undefined => (f?.trim() ? f.trim().split(/\s+/) : undefined);
  return { a: split(a), b: split(b) };
}

/** The table of side-by-side phases: each phase's CPU per request on A and B, their ratio, requests and load. */
export function abPhasesTable(first: string, phases: Record<string, AbPhase>): string {
  const rows = Object.entries(phases).map(([op, f]) => [op, String(f.cpuUsPerOp.a), String(f.cpuUsPerOp.b), f.bToA.toFixed(3), `${f.done.a}/${f.done.b}`, String(f.load)]);
  return formatTable([first, 'A CPU µs', 'B CPU µs', 'B ÷ A', 'requests A/B', 'load'], rows);
}

function flagsOf(flags: string[] | undefined): string {
  return flags?.length ? ` (node ${flags.join(' ')})` : '';
}

export function formatApiAbTable(r: ApiAbResult): string {
  return [
    `api-ab: A = ${r.a}${flagsOf(r.nodeFlags.a)}, B = this build${flagsOf(r.nodeFlags.b)}, side by side on SQLite (${r.params.objects} ConfigMaps, ${r.params.concurrency} clients; TokenReviews at ${r.params.reviewConcurrency}); peak RSS A ${r.peakRssMb.a} MB, B ${r.peakRssMb.b} MB; ${r.cores} cores; node ${r.node}`,
    '(server CPU µs per request from /proc; B ÷ A below 1: B is cheaper)',
    abPhasesTable('op', r.results),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const args = parseBenchArgs(process.argv.slice(2), {
    command: 'bench/api-ab',
    usage:
      "usage: node dist/bench/api-ab.js [--against=DIR] [--node-flags-a=FLAGS] [--node-flags-b=FLAGS]\nThis build's API server and DIR's build side by side (without DIR: this build twice, the noise floor), with the ratio of their CPU per request.",
    options: { against: { type: 'string' }, 'node-flags-a': { type: 'string' }, 'node-flags-b': { type: 'string' } },
  });
  const result = await runApiAbBench({}, args.string('against'), abNodeFlags(args.string('node-flags-a'), args.string('node-flags-b')));
  printResult(result, formatApiAbTable(result));
}
