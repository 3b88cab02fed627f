/**
 * Load shapes, both bounded in count and in time: a closed loop (C workers, each issuing its next
 * operation when the previous one finished: the sustained rate) and an open loop (operations
 * started on a fixed schedule whatever the server does: latency under a given load).
 */
import { summarize, type LatencySummary } from './stats.js';

export interface LoadResult {
  ok: number;
  errors: number;
  /** The first error's message, to say why a run went wrong. */
  firstError?: string;
  seconds: number;
  perSec: number;
  latencyMs: LatencySummary;
}

export interface ClosedLoopOptions {
  concurrency: number;
  /** Stop after this many operations (started). */
  maxOps: number;
  /** ...or after this long, whichever comes first. */
  maxMs: number;
  op: (i: number) => Promise<void>;
}

export async function closedLoop(o: ClosedLoopOptions): Promise<LoadResult> {
  const acc = accumulator();
  const start = performance.now();
  await closedLoopInto(acc, o);
  return result(acc.samples, acc.errors, acc.firstError, performance.now() - start);
}

/** What a side's closed loops have done so far: the latencies of its successes, its errors and its next operation's index. */
interface Accumulated {
  samples: number[];
  errors: number;
  firstError?: string;
  next: number;
  /** How long its loops ran (alternated sides: the sum of the side's slices). */
  ms: number;
}

const accumulator = (): Accumulated => ({ samples: [], errors: 0, next: 0, ms: 0 });

/** Runs a closed loop, adding to `acc` and numbering operations on from `acc.next`. */
async function closedLoopInto(acc: Accumulated, o: ClosedLoopOptions): Promise<void> {
  const first = acc.next;
  const deadline = performance.now() + o.maxMs;
  const worker = async (): Promise<void> => {
    while (acc.next - first < o.maxOps && performance.now() < deadline) {
      const i = acc.next++;
      const t0 = performance.now();
      try {
        await o.op(i);
        acc.samples.push(performance.now() - t0);
      } catch (err) {
        acc.errors++;
        acc.firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
}

export interface AlternatedOptions {
  /** Clients of both sides, or of each. */
  concurrency: number | readonly [number, number];
  /** How long each side runs in all. */
  msEach: number;
  /** In how many slices each side's time is cut. */
  slices: number;
  ops: readonly [(i: number) => Promise<void>, (i: number) => Promise<void>];
  /** Runs one slice of side `k` (`run`): to read what that side spent on it. */
  slice?: (k: 0 | 1, run: () => Promise<void>) => Promise<void>;
}

/**
 * Two closed loops (two servers' sides of one phase) run in turn in short slices, in the order
 * A B, B A, A B, ...: each side meets the host in the same states, where two phases one after the
 * other may meet a host whose speed changed between them (back-to-back 5-second GET phases of one
 * server varied by half on a quiet host). Each side's figures are over all its slices.
 */
export async function alternatedClosedLoops(o: AlternatedOptions): Promise<[LoadResult, LoadResult]> {
  const acc = [accumulator(), accumulator()] as const;
  const sliceMs = o.msEach / o.slices;
  for (let s = 0; s < o.slices; s++) {
    for (const k of s % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
      const run = async (): Promise<void> => {
        const start = performance.now();
        const concurrency = typeof o.concurrency === 'number' ? o.concurrency : o.concurrency[k];
        await closedLoopInto(acc[k], { concurrency, maxOps: Number.MAX_SAFE_INTEGER, maxMs: sliceMs, op: o.ops[k] });
        acc[k].ms += performance.now() - start;
      };
      await (o.slice ? o.slice(k, run) : run());
    }
  }
  const done = (a: Accumulated): LoadResult => result(a.samples, a.errors, a.firstError, a.ms);
  return [done(acc[0]), done(acc[1])];
}

export interface OpenLoopOptions {
  ratePerSec: number;
  /** How long operations keep being started. */
  durationMs: number;
  /** Operations still running this long after the last start are counted as errors. */
  drainMs?: number;
  op: (i: number) => Promise<void>;
}

/** Latency is measured from each operation's scheduled start, so a stalled generator cannot hide queueing. */
export async function openLoop(o: OpenLoopOptions): Promise<LoadResult> {
  const samples: number[] = [];
  const running: Promise<void>[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const total = Math.max(1, Math.round((o.ratePerSec * o.durationMs) / 1000));
  const interval = 1000 / o.ratePerSec;
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    running.push(
      o.op(i).then(
        () => void samples.push(performance.now() - due),
        (err: unknown) => {
          errors++;
          firstError ??= err instanceof Error ? err.message : String(err);
        },
      ),
    );
  }
  const drained = Promise.all(running).then(() => true);
  const timedOut = new Promise<boolean>((r) => setTimeout(() => r(false), o.drainMs ?? 30_000).unref());
  if (!(await Promise.race([drained, timedOut]))) {
    errors += total - samples.length - errors;
    firstError ??= 'operations still running after the drain timeout';
  }
  return result(samples, errors, firstError, performance.now() - start);
}

function result(samples: number[], errors: number, firstError: string | undefined, ms: number): LoadResult {
  const seconds = ms / 1000;
  return { ok: samples.length, errors, firstError, seconds: Math.round(seconds * 1000) / 1000, perSec: Math.round(samples.length / seconds), latencyMs: summarize(samples) };
}
