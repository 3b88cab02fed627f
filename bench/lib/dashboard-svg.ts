/**
 * The dashboard drawn as Grafana lays it out, from range queries' answers (lib/grafana.ts): rows as
 * headings, time series as lines on a time axis with their legend, stat panels as their last values,
 * values in each panel's unit. Each panel is a `<g class="panel">` saying how many series it drew, so
 * a test can check that every panel shows data.
 */
import { formatValue, type DrawnSeries, type GridPos, type PanelData, type Range } from './grafana.js';
import { coord, escapeXml, line, svgDocument, text } from './svg.js';

const WIDTH = 1440;
const COL = WIDTH / 24;
/** Grafana's grid row height and the gap between panels, in pixels. */
const ROW = 30;
const GAP = 8;
const HEADER = 44;
const PALETTE = ['#7eb26d', '#eab839', '#6ed0e0', '#ef843c', '#e24d42', '#1f78c1', '#ba43a9', '#705da0', '#508642', '#cca300', '#447ebc', '#c15c17'];
const color = (i: number): string => PALETTE[i % PALETTE.length] ?? '#888';
/** Average glyph width of the 11 px legend font, to wrap the legend without measuring text. */
const CHAR = 5.7;
const LEGEND_LINE = 13;

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

const boxOf = (g: GridPos): Box => ({ x: g.x * COL + GAP / 2, y: HEADER + g.y * ROW + GAP / 2, w: g.w * COL - GAP, h: g.h * ROW - GAP });

/** 0 up to a round maximum at or above `max`, in four or five steps of 1, 2 or 5 times a power of ten. */
export function niceTicks(max: number): number[] {
  const top = max > 0 ? max : 1;
  const raw = top / 4;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * pow >= raw) ?? 10) * pow;
  const ticks: number[] = [];
  for (let v = 0; v < top + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

const clock = (unix: number): string => new Date(unix * 1000).toISOString().slice(11, 19);

/** Legend entries in wrapped lines, as many lines as fit; the rest counted as "+N more". */
function legendLines(series: DrawnSeries[], b: Box, maxLines: number): string[] {
  const out: string[] = [];
  let x = b.x + 8;
  let lineNo = 0;
  for (const [i, s] of series.entries()) {
    const w = 30 + s.name.length * CHAR;
    // The last line keeps room for "+N more".
    const right = (): number => b.x + b.w - (lineNo === maxLines - 1 && i < series.length - 1 ? 64 : 8);
    if (x + w > right() && x > b.x + 8) {
      lineNo++;
      x = b.x + 8;
    }
    if (lineNo >= maxLines) {
      out.push(text(b.x + b.w - 8, b.y + b.h - 6, `+${series.length - i} more`, 'text-anchor="end" font-size="11" fill="#555"'));
      break;
    }
    const y = b.y + b.h - 6 - (maxLines - 1 - lineNo) * LEGEND_LINE;
    out.push(line(x, y - 4, x + 14, y - 4, `${color(i)} stroke-width="3"`), text(x + 18, y, s.name, 'font-size="10.5" fill="#333"'));
    x += w;
  }
  return out;
}

/** The path of a series: a line through its finite samples, broken where a sample is missing or NaN. */
function seriesPath(s: DrawnSeries, i: number, step: number, x: (t: number) => number, y: (v: number) => number): string {
  let d = '';
  let prev: number | undefined;
  const dots: string[] = [];
  const finite = s.points.filter(([, v]) => Number.isFinite(v));
  for (const [t, v] of finite) {
    d += `${prev !== undefined && t - prev <= step * 1.5 ? 'L' : 'M'}${coord(x(t))} ${coord(y(v))}`;
    prev = t;
  }
  // A lone sample between gaps is a dot, as Grafana shows it.
  finite.forEach(([t, v], k) => {
    const before = finite[k - 1]?.[0];
    const after = finite[k + 1]?.[0];
    if ((before === undefined || t - before > step * 1.5) && (after === undefined || after - t > step * 1.5)) dots.push(`<circle cx="${coord(x(t))}" cy="${coord(y(v))}" r="2" fill="${color(i)}"/>`);
  });
  return `<path class="series" data-points="${finite.length}" d="${d}" fill="none" stroke="${color(i)}" stroke-width="1.5"/>${dots.join('')}`;
}

function timeseries(p: PanelData, b: Box, range: Range): string[] {
  const unit = p.panel.fieldConfig?.defaults?.unit;
  const legendRows = p.panel.gridPos.h >= 8 ? 4 : 2;
  const plot = { left: b.x + 74, right: b.x + b.w - 12, top: b.y + 30, bottom: b.y + b.h - 24 - legendRows * LEGEND_LINE };
  const values = p.series.flatMap((s) => s.points.map(([, v]) => v)).filter(Number.isFinite);
  const ticks = niceTicks(Math.max(0, ...values));
  const top = ticks[ticks.length - 1] ?? 1;
  const x = (t: number): number => plot.left + ((t - range.start) / (range.end - range.start)) * (plot.right - plot.left);
  const y = (v: number): number => plot.bottom - (v / top) * (plot.bottom - plot.top);
  const out: string[] = [];
  for (const t of ticks) out.push(line(plot.left, y(t), plot.right, y(t), '#e4e4e4'), text(plot.left - 6, y(t) + 4, formatValue(t, unit), 'text-anchor="end" font-size="11" fill="#555"'));
  const every = [15, 30, 60, 120, 300, 600].find((s) => (range.end - range.start) / s <= 6) ?? 1800;
  for (let t = Math.ceil(range.start / every) * every; t <= range.end; t += every) out.push(text(x(t), plot.bottom + 14, clock(t), 'text-anchor="middle" font-size="11" fill="#555"'));
  p.series.forEach((s, i) => out.push(seriesPath(s, i, range.step, x, y)));
  out.push(...legendLines(p.series, b, legendRows));
  return out;
}

/** Each series' last finite value, large, with its name under it, in a grid filling the panel. */
function stat(p: PanelData, b: Box): string[] {
  const unit = p.panel.fieldConfig?.defaults?.unit;
  const n = Math.max(1, p.series.length);
  const cols = Math.ceil(Math.sqrt(n));
  const rows = Math.ceil(n / cols);
  const cw = (b.w - 16) / cols;
  const ch = (b.h - 36) / rows;
  return p.series.map((s, i) => {
    const last = [...s.points].reverse().find(([, v]) => Number.isFinite(v))?.[1];
    const cx = b.x + 8 + (i % cols) * cw + cw / 2;
    const cy = b.y + 30 + Math.floor(i / cols) * ch + ch / 2;
    const label = last === undefined ? 'No data' : formatValue(last, unit);
    // As large as fits the cell, as Grafana's stat panel sizes its text.
    const size = Math.min(26, ch / 3, (cw - 8) / (label.length * 0.62));
    return (
      text(cx, cy, label, `class="stat-value" text-anchor="middle" font-size="${coord(size)}" font-weight="bold" fill="${color(i)}"`) +
      text(cx, cy + size * 0.9, s.name, 'text-anchor="middle" font-size="11" fill="#333"')
    );
  });
}

function panel(p: PanelData, range: Range): string {
  const b = boxOf(p.panel.gridPos);
  if (p.panel.type === 'row') {
    return `<g class="row">${text(b.x, b.y + b.h - 6, p.panel.title, 'font-size="15" font-weight="bold" fill="#222"')}${line(b.x, b.y + b.h, b.x + b.w, b.y + b.h, '#bbb')}</g>`;
  }
  const body = p.panel.type === 'stat' ? stat(p, b) : timeseries(p, b, range);
  const frame = `<rect x="${coord(b.x)}" y="${coord(b.y)}" width="${coord(b.w)}" height="${coord(b.h)}" rx="3" fill="#fcfcfc" stroke="#d0d0d0"/>`;
  const title = text(b.x + 8, b.y + 18, p.panel.title, 'font-size="13" font-weight="bold" fill="#222"');
  return `<g class="panel" data-type="${escapeXml(p.panel.type)}" data-title="${escapeXml(p.panel.title)}" data-series="${p.series.length}">${frame}${title}${body.join('')}</g>`;
}

/** The whole dashboard: its title and the time range over a grid of panels. */
export function dashboardSvg(title: string, panels: PanelData[], range: Range, notes: string[]): string {
  const bottom = Math.max(...panels.map((p) => p.panel.gridPos.y + p.panel.gridPos.h));
  const height = HEADER + bottom * ROW + 8 + notes.length * 15;
  const head = text(GAP, 26, title, 'font-size="20" font-weight="bold" fill="#222"') + text(GAP + 320, 26, `${new Date(range.start * 1000).toISOString().slice(0, 10)} ${clock(range.start)} to ${clock(range.end)} UTC`, 'font-size="13" fill="#555"');
  return svgDocument(WIDTH, height, `${head}${panels.map((p) => panel(p, range)).join('')}${notes.map((n, i) => text(GAP, height - 6 - (notes.length - 1 - i) * 15, n, 'font-size="11" fill="#555"')).join('')}`);
}
