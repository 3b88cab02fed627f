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
  const samples: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const deadline = start + o.maxMs;
  const worker = async (): Promise<void> => {
    while (next < o.maxOps && performance.now() < deadline) {
      const i = next++;
      const t0 = performance.now();
      try {
        await o.op(i);
        samples.push(performance.now() - t0);
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  return result(samples, errors, firstError, performance.now() - start);
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
