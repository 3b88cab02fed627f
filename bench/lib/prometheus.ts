/**
 * A real Prometheus (the Debian package's 2.42) on loopback, scraping the given targets every second,
 * with its TSDB in a temp directory; `query` and `queryRange` evaluate PromQL through the HTTP API.
 * Used by the dashboard test (test/monitoring) and the dashboard picture (bench/dashboard.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';

export interface PromSeries {
  metric: Record<string, string>;
  value: [number, string];
}

/** One series of a range query: its samples as [unix seconds, value text] ("NaN" included). */
export interface PromRangeSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

export interface Prometheus {
  url: string;
  /** An instant query at now; rejects on a PromQL error. */
  query(expr: string): Promise<PromSeries[]>;
  /** A range query (GET /api/v1/query_range) from `start` to `end` (unix seconds) every `step` seconds. */
  queryRange(expr: string, start: number, end: number, step: number): Promise<PromRangeSeries[]>;
  /** Values of a label (GET /api/v1/label/NAME/values), optionally among series matching `match`. */
  labelValues(label: string, match?: string): Promise<string[]>;
  close(): Promise<void>;
}

async function api<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${url}: ${body.error ?? res.status}`);
  return body.data;
}

async function waitReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${log()}`);
    const ok = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`prometheus not ready: ${log()}`);
}

export async function startPrometheus(job: string, targets: string[]): Promise<Prometheus> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-prometheus-'));
  const config = { global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' }, scrape_configs: [{ job_name: job, static_configs: [{ targets }] }] };
  writeFileSync(path.join(dir, 'prometheus.yml'), JSON.stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    'prometheus',
    [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(url, child, () => log);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    url,
    query: (expr) => api<{ result: PromSeries[] }>(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`).then((d) => d.result),
    queryRange: (expr, start, end, step) =>
      api<{ result: PromRangeSeries[] }>(`${url}/api/v1/query_range?${new URLSearchParams({ query: expr, start: String(start), end: String(end), step: String(step) }).toString()}`).then((d) => d.result),
    labelValues: (label, match) => api<string[]>(`${url}/api/v1/label/${label}/values${match ? `?match[]=${encodeURIComponent(match)}` : ''}`),
    close,
  };
}
