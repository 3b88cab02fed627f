/**
 * What every benchmark prints: one JSON object (so runs can be collected and compared) followed by
 * a plain-text table for people. Shared so the four benchmarks cannot drift apart in format.
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';

export interface Machine {
  cores: number;
  node: string;
}

/** The fields every result carries: the core count and Node version the figures were taken on. */
export function machine(): Machine {
  return { cores: os.availableParallelism(), node: process.version };
}

/** Columns padded to their widest cell; the first column left-aligned, the others right-aligned. */
export function formatTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

export function printResult(result: object, table: string): void {
  console.log(JSON.stringify(result));
  console.log(table);
}

/** True when the module at `metaUrl` is the script node was started with. */
export function isMain(metaUrl: string): boolean {
  return process.argv[1] !== undefined && metaUrl === pathToFileURL(process.argv[1]).href;
}

/** Rounds to `digits` decimals (ratios and milliseconds in the JSON stay readable). */
export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export const mb = (bytes: number): number => round(bytes / 1048576, 1);
