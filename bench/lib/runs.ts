/**
 * `--runs N`: one benchmark run N times in a row. The JSON keeps every run's result and adds, for
 * each number the results carry (by its path, e.g. `closedLoop.csrsPerSec`), the median and range
 * over the runs: on a shared machine one run says little, the spread says how much to trust it.
 */
import { formatTable, round } from './report.js';

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface RunsResult {
  name: string;
  runs: number;
  /** Every run's result, in order. */
  results: object[];
  /** Median and range of each figure, by its dotted path in the results. */
  summary: Record<string, Spread>;
}

/** Parameters and machine facts are the same in every run: not figures. */
const NOT_FIGURES = new Set(['params', 'cores', 'node']);

/** Every numeric leaf of `value` by its dotted path (arrays by index). */
export function numericLeaves(value: unknown, prefix = '', out = new Map<string, number>()): Map<string, number> {
  if (typeof value === 'number' && Number.isFinite(value)) out.set(prefix, value);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (prefix === '' && NOT_FIGURES.has(k)) continue;
      numericLeaves(v, prefix ? `${prefix}.${k}` : k, out);
    }
  }
  return out;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

export function summarizeRuns(name: string, results: object[]): RunsResult {
  const byPath = new Map<string, number[]>();
  for (const r of results) {
    for (const [path, v] of numericLeaves(r)) {
      const list = byPath.get(path) ?? [];
      list.push(v);
      byPath.set(path, list);
    }
  }
  const summary: Record<string, Spread> = {};
  for (const [path, values] of byPath) {
    summary[path] = { median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) };
  }
  return { name, runs: results.length, results, summary };
}

export function formatRunsTable(r: RunsResult): string {
  const rows = Object.entries(r.summary).map(([path, s]) => [path, String(s.median), `${s.min}–${s.max}`]);
  return [`${r.name}: ${r.runs} runs, median and range of each figure`, formatTable(['figure', 'median', 'range'], rows)].join('\n');
}
