/**
 * What Grafana does with the dashboard JSON before drawing, for a dashboard drawn without Grafana: the
 * panels in their grid, each target's PromQL with the variables substituted, run as a range query, its
 * series named by the target's legendFormat, values formatted in the panel's unit.
 */
import { readFileSync } from 'node:fs';
import type { Prometheus } from './prometheus.js';

export interface GridPos {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface DashboardTarget {
  refId: string;
  expr: string;
  legendFormat?: string;
}

export interface DashboardPanel {
  title: string;
  type: string;
  gridPos: GridPos;
  targets?: DashboardTarget[];
  fieldConfig?: { defaults?: { unit?: string } };
}

export interface Dashboard {
  title: string;
  panels: DashboardPanel[];
  templating: { list: { name: string; definition?: string }[] };
}

export const readDashboard = (file: string): Dashboard => JSON.parse(readFileSync(file, 'utf8')) as Dashboard;

/** What Grafana substitutes before sending a query: the job variable and the rate window. */
export const grafanaExpr = (expr: string, vars: { job: string; rateInterval: string }): string =>
  expr.replaceAll('$__rate_interval', vars.rateInterval).replaceAll('$job', vars.job);

/** A legendFormat with `{{label}}` filled from the series' labels (Grafana leaves an unknown label empty). */
export const legend = (format: string | undefined, metric: Record<string, string>): string =>
  format === undefined ? JSON.stringify(metric) : format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => metric[name] ?? '').trim();

export interface DrawnSeries {
  name: string;
  /** [unix seconds, value]; NaN where Prometheus answered NaN (a quantile of no observations). */
  points: [number, number][];
}

export interface PanelData {
  panel: DashboardPanel;
  series: DrawnSeries[];
}

export interface Range {
  start: number;
  end: number;
  step: number;
}

/** Every panel's targets as range queries, in dashboard order (rows have no targets and no series). */
export async function queryPanels(prom: Prometheus, dashboard: Dashboard, range: Range, vars: { job: string; rateInterval: string }): Promise<PanelData[]> {
  const out: PanelData[] = [];
  for (const panel of dashboard.panels) {
    const series: DrawnSeries[] = [];
    for (const t of panel.targets ?? []) {
      const result = await prom.queryRange(grafanaExpr(t.expr, vars), range.start, range.end, range.step);
      for (const s of result) series.push({ name: legend(t.legendFormat, s.metric), points: s.values.map(([ts, v]) => [ts, Number(v)]) });
    }
    out.push({ panel, series: series.sort((a, b) => a.name.localeCompare(b.name)) });
  }
  return out;
}

const trim = (v: number, digits: number): string => String(Number(v.toFixed(digits)));

/** A number as Grafana's `short` unit shows it: K, Mil, Bil. */
function short(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e9) return `${trim(v / 1e9, 1)} Bil`;
  if (a >= 1e6) return `${trim(v / 1e6, 1)} Mil`;
  if (a >= 1e3) return `${trim(v / 1e3, 1)} K`;
  return trim(v, a < 1 ? 3 : 2);
}

/** Seconds as Grafana's `s` unit shows them: µs, ms, s, min, hour, day. */
function seconds(v: number): string {
  const a = Math.abs(v);
  if (a === 0) return '0 s';
  if (a < 1e-3) return `${trim(v * 1e6, 0)} µs`;
  if (a < 1) return `${trim(v * 1e3, 1)} ms`;
  if (a < 60) return `${trim(v, 2)} s`;
  if (a < 3600) return `${trim(v / 60, 1)} min`;
  if (a < 86400) return `${trim(v / 3600, 1)} hour`;
  return `${trim(v / 86400, 1)} day`;
}

/** A duration as Grafana's `dtdurations` shows it: the two largest of years, days, hours, minutes, seconds. */
function durations(v: number): string {
  const parts: string[] = [];
  let rest = Math.round(Math.abs(v));
  for (const [unit, size] of [['year', 365 * 86400], ['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push(`${n} ${unit}${n === 1 ? '' : 's'}`);
  }
  return `${v < 0 ? '-' : ''}${parts.filter((p) => !p.startsWith('0 ')).slice(0, 2).join(', ') || '0 seconds'}`;
}

/** A value in one of the units the dashboard uses (Grafana's names); other units fall back to `short`. */
export function formatValue(v: number, unit: string | undefined): string {
  if (Number.isNaN(v)) return 'NaN';
  switch (unit) {
    case 'reqps':
      return `${short(v)} req/s`;
    case 's':
      return seconds(v);
    case 'dtdurations':
      return durations(v);
    default:
      return short(v);
  }
}
