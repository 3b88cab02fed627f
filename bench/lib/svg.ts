/** SVG primitives shared by the bench pictures (bench/plot.ts, bench/dashboard.ts): text, lines, the document. */

/** Coordinates with one decimal, integers as they are. */
export const coord = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(1));

export const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

export const text = (x: number, y: number, s: string, extra = ''): string => `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${extra}>${escapeXml(s)}</text>`;

/** A line; `stroke` is a colour, optionally followed by more attributes. */
export const line = (x1: number, y1: number, x2: number, y2: number, stroke: string): string => {
  const [colour, ...attrs] = stroke.split(' ');
  return `<line x1="${coord(x1)}" y1="${coord(y1)}" x2="${coord(x2)}" y2="${coord(y2)}" stroke="${colour}"${attrs.length ? ` ${attrs.join(' ')}` : ''}/>`;
};

/** A white page of `width` x `height` holding `body`. */
export const svgDocument = (width: number, height: number, body: string, extra = 'font-family="sans-serif" font-size="12"'): string =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${coord(width)}" height="${coord(height)}" ${extra}><rect width="100%" height="100%" fill="white"/>${body}</svg>\n`;
