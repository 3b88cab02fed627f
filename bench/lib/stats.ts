/** Latency percentiles the way the issue asks for them: p50/p90/p99/max in milliseconds. */
import { round } from './report.js';

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles of `samplesMs` (rounded to 0.01 ms); all zero when empty. */
export function summarize(samplesMs: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(samplesMs).sort();
  const at = (q: number): number => (sorted.length ? round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0, 2) : 0);
  return { count: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
}

export function formatLatency(l: LatencySummary): string {
  return `${l.p50}/${l.p90}/${l.p99}/${l.max}`;
}
