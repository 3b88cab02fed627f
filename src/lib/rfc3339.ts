/**
 * Kubernetes' wire form of times: metav1.Time is RFC 3339 in UTC to the second, metav1.MicroTime
 * has exactly six fractional digits. Parsing follows Go's time.Parse with those layouts, to the
 * letter of its error messages, which kube-apiserver returns for a malformed time.
 */

/** The last second formatted: every write stamps one or two times, nearly always within the same second. */
let lastSecond = NaN;
let lastText = '';

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function timestampSeconds(d: Date): string {
  const second = Math.floor(d.getTime() / 1000);
  // An invalid date (NaN) never equals the cache, so it throws as toISOString does.
  if (second !== lastSecond) {
    lastText = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
    lastSecond = second;
  }
  return lastText;
}

/** An instant in UTC: whole seconds since the epoch and the nanoseconds within that second. */
export interface GoTime {
  seconds: number;
  nanos: number;
}

export const TIME_LAYOUT = '2006-01-02T15:04:05Z07:00';
export const MICRO_TIME_LAYOUT = '2006-01-02T15:04:05.000000Z07:00';

const quote = (s: string): string => JSON.stringify(s);
const isDigit = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x39;

/** The pieces of a layout in Go's order: the literal before each element, then the element. */
const CHUNKS: Record<string, [prefix: string, elem: string][]> = {
  [TIME_LAYOUT]: [['', '2006'], ['-', '01'], ['-', '02'], ['T', '15'], [':', '04'], [':', '05'], ['', 'Z07:00']],
  [MICRO_TIME_LAYOUT]: [['', '2006'], ['-', '01'], ['-', '02'], ['T', '15'], [':', '04'], [':', '05'], ['', '.000000'], ['', 'Z07:00']],
};

class Bad extends Error {}

/** Go's getnum: one or two digits (exactly two when fixed). */
function getnum(s: string, fixed: boolean): [number, string] {
  if (!isDigit(s, 0)) throw new Bad();
  if (!isDigit(s, 1)) {
    if (fixed) throw new Bad();
    return [Number(s[0]), s.slice(1)];
  }
  return [Number(s.slice(0, 2)), s.slice(2)];
}

/** Nanoseconds from a fraction `.ddd` of `n` characters (Go reads at most nine digits). */
function nanosOf(s: string, n: number): number {
  if (s[0] !== '.' && s[0] !== ',') throw new Bad();
  const digits = s.slice(1, Math.min(n, 10));
  if (!/^\d+$/.test(digits)) throw new Bad();
  return Number(digits.padEnd(9, '0'));
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(month: number, year: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  min: number;
  sec: number;
  nanos: number;
  offset: number;
}

/** A number of one or two digits into `f[key]`, refused past `max` (named by `range` as Go names it). */
function num(key: 'month' | 'day' | 'hour' | 'min' | 'sec', fixed: boolean, range?: [min: number, max: number, name: string]) {
  return (v: string, f: Fields): string => {
    const [n, rest] = getnum(v, fixed);
    if (range && (n < range[0] || n > range[1])) throw new RangeError(range[2]);
    f[key] = n;
    return rest;
  };
}

/** Go accepts a fraction after the seconds even when the layout has none. */
function trailingFraction(v: string, f: Fields): string {
  if (v.length < 2 || (v[0] !== '.' && v[0] !== ',') || !isDigit(v, 1)) return v;
  let n = 2;
  while (isDigit(v, n)) n++;
  f.nanos = nanosOf(v, n);
  return v.slice(n);
}

/** Readers of each layout element: each takes its part off `v` and returns the rest, or throws Bad or a range name. */
const ELEMENTS: Record<string, (v: string, f: Fields, fractionInLayout: boolean) => string> = {
  '2006': (v, f) => {
    if (!/^\d{4}/.test(v)) throw new Bad();
    f.year = Number(v.slice(0, 4));
    return v.slice(4);
  },
  '01': num('month', true, [1, 12, 'month']),
  '02': num('day', true),
  '15': num('hour', false, [0, 23, 'hour']),
  '04': num('min', true, [0, 59, 'minute']),
  '05': (v, f, fractionInLayout) => {
    const rest = num('sec', true, [0, 59, 'second'])(v, f);
    return fractionInLayout ? rest : trailingFraction(rest, f);
  },
  '.000000': (v, f) => {
    if (v.length < 7) throw new Bad();
    f.nanos = nanosOf(v, 7);
    return v.slice(7);
  },
  'Z07:00': (v, f) => zone(v, f),
};

/** `Z07:00`: `Z`, or `±hh:mm` (Go allows up to 24 hours and 60 minutes). */
function zone(v: string, f: Fields): string {
  if (v[0] === 'Z') return v.slice(1);
  if (v.length < 6 || v[3] !== ':') throw new Bad();
  const [hr] = getnum(v.slice(1, 3), true);
  const [mm] = getnum(v.slice(4, 6), true);
  if (hr > 24) throw new RangeError('time zone offset hour');
  if (mm > 60) throw new RangeError('time zone offset minute');
  if (v[0] !== '+' && v[0] !== '-') throw new Bad();
  f.offset = (v[0] === '-' ? -1 : 1) * (hr * 60 + mm) * 60;
  return v.slice(6);
}

/**
 * Go's time.Parse(layout, value) for the two Kubernetes layouts; throws an Error whose message is
 * Go's ParseError text, e.g. `parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`.
 */
export function parseGoTime(value: string, layout: typeof TIME_LAYOUT | typeof MICRO_TIME_LAYOUT): GoTime {
  const chunks = CHUNKS[layout] ?? [];
  const f: Fields = { year: 0, month: 0, day: 0, hour: 0, min: 0, sec: 0, nanos: 0, offset: 0 };
  const cannot = (valueElem: string, layoutElem: string): Error =>
    new Error(`parsing time ${quote(value)} as ${quote(layout)}: cannot parse ${quote(valueElem)} as ${quote(layoutElem)}`);
  const outOfRange = (what: string): Error => new Error(`parsing time ${quote(value)}: ${what} out of range`);
  let v = value;
  for (const [prefix, elem] of chunks) {
    for (const ch of prefix) {
      if (v[0] !== ch) throw cannot(v, prefix);
      v = v.slice(1);
    }
    const hold = v;
    try {
      v = (ELEMENTS[elem] ?? zone)(v, f, layout === MICRO_TIME_LAYOUT);
    } catch (e) {
      if (e instanceof RangeError) throw outOfRange(e.message);
      throw cannot(hold, elem);
    }
  }
  if (v.length > 0) throw new Error(`parsing time ${quote(value)}: extra text: ${quote(v)}`);
  if (f.day < 1 || f.day > daysIn(f.month, f.year)) throw outOfRange('day');
  const d = new Date(Date.UTC(2000, 0, 1, f.hour, f.min, f.sec));
  d.setUTCFullYear(f.year, f.month - 1, f.day);
  return { seconds: d.getTime() / 1000 - f.offset, nanos: f.nanos };
}

/** `YYYY-MM-DDTHH:MM:SS`, then `.ffffffZ` (MicroTime) or `Z` (Time): the form this module formats. */
const CANONICAL: Record<string, RegExp> = {
  [TIME_LAYOUT]: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
  [MICRO_TIME_LAYOUT]: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/,
};

/** The two digits at `i` of a string known to hold digits there. */
const twoDigits = (s: string, i: number): number => (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;

/**
 * Whether `value` is a valid time of `layout` already in the form formatTime/formatMicroTime give
 * it, and not the zero time: then parsing and formatting it again gives it back unchanged. Clients
 * send times this way (every Lease renewal's renewTime, managedFields' time), so a decoder can keep
 * them without parseGoTime's work, which was ~8% of the API server's CPU per Lease renewal.
 */
export function isCanonicalTime(value: string, layout: typeof TIME_LAYOUT | typeof MICRO_TIME_LAYOUT): boolean {
  if (CANONICAL[layout]?.test(value) !== true || value.startsWith('0001-01-01T00:00:00')) return false;
  // The regexp vouched for the digits; read them in place rather than through capture groups.
  const year = twoDigits(value, 0) * 100 + twoDigits(value, 2);
  const month = twoDigits(value, 5);
  const day = twoDigits(value, 8);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month, year) && twoDigits(value, 11) <= 23 && twoDigits(value, 14) <= 59 && twoDigits(value, 17) <= 59;
}

/** Seconds of Go's zero time, 0001-01-01T00:00:00Z (Date.UTC maps years below 100 to 19xx). */
const ZERO_SECONDS = ((): number => {
  const d = new Date(0);
  d.setUTCFullYear(1, 0, 1);
  return d.getTime() / 1000;
})();

/** Go's zero time, which metav1 writes as null. */
export function isZeroTime(t: GoTime): boolean {
  return t.seconds === ZERO_SECONDS && t.nanos === 0;
}

/** `YYYY-MM-DDTHH:MM:SS` in UTC, the year padded to four digits as Go writes it. */
function isoSeconds(t: GoTime): string {
  const iso = new Date(t.seconds * 1000).toISOString();
  const yearEnd = iso.indexOf('-', 1);
  return `${iso.slice(0, yearEnd).replace(/^\+?0*(\d{4,})$/, '$1')}${iso.slice(yearEnd, yearEnd + 15)}`;
}

/** metav1.Time's JSON form: RFC 3339 in UTC, fraction dropped. */
export function formatTime(t: GoTime): string {
  return `${isoSeconds(t)}Z`;
}

/** metav1.MicroTime's JSON form: six fractional digits (truncated), UTC. */
export function formatMicroTime(t: GoTime): string {
  return `${isoSeconds(t)}.${String(Math.floor(t.nanos / 1000)).padStart(6, '0')}Z`;
}
