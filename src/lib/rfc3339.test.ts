import { formatMicroTime, formatTime, isCanonicalTime, isZeroTime, MICRO_TIME_LAYOUT, parseGoTime, TIME_LAYOUT, timestampSeconds } from './rfc3339.js';

/** What Go's time.Parse answers for metav1.Time (RFC3339) and metav1.MicroTime (RFC3339Micro) layouts. */
const T = TIME_LAYOUT;
const M = MICRO_TIME_LAYOUT;
const parsed: [string, typeof T | typeof M, string, string][] = [
  ['2026-11-24T04:30:28.654321+00:00', M, '2026-11-24T04:30:28Z', '2026-11-24T04:30:28.654321Z'],
  ['2026-11-24T04:30:28.654321+02:00', T, '2026-11-24T02:30:28Z', '2026-11-24T02:30:28.654321Z'],
  ['2026-11-24T23:30:28-01:30', T, '2026-11-25T01:00:28Z', '2026-11-25T01:00:28.000000Z'],
  ['2026-11-24T04:30:28.999999999Z', T, '2026-11-24T04:30:28Z', '2026-11-24T04:30:28.999999Z'],
  ['2026-11-24T04:30:28,5Z', T, '2026-11-24T04:30:28Z', '2026-11-24T04:30:28.500000Z'],
  ['2026-11-24T4:30:28Z', T, '2026-11-24T04:30:28Z', '2026-11-24T04:30:28.000000Z'],
  ['2024-02-29T00:00:00Z', T, '2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000000Z'],
  ['0050-06-01T00:00:00Z', T, '0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000000Z'],
];

const refused: [string, typeof T | typeof M, string][] = [
  ['garbage', T, 'parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"'],
  ['', T, 'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"'],
  ['2026-11-24T04:30:28Z', M, 'parsing time "2026-11-24T04:30:28Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'],
  ['2026-11-24T04:30:28.123Z', M, 'parsing time "2026-11-24T04:30:28.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"'],
  ['2026-11-24T04:30:28.123456789Z', M, 'parsing time "2026-11-24T04:30:28.123456789Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "789Z" as "Z07:00"'],
  ['2026-11-24 04:30:28Z', T, 'parsing time "2026-11-24 04:30:28Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 04:30:28Z" as "T"'],
  ['2026-11-24T04:30:28+0100', T, 'parsing time "2026-11-24T04:30:28+0100" as "2006-01-02T15:04:05Z07:00": cannot parse "+0100" as "Z07:00"'],
  ['2026-11-24T04:30:28', T, 'parsing time "2026-11-24T04:30:28" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"'],
  ['2026-1-24T04:30:28Z', T, 'parsing time "2026-1-24T04:30:28Z" as "2006-01-02T15:04:05Z07:00": cannot parse "1-24T04:30:28Z" as "01"'],
  ['2026-13-01T00:00:00Z', T, 'parsing time "2026-13-01T00:00:00Z": month out of range'],
  ['2026-02-29T00:00:00Z', T, 'parsing time "2026-02-29T00:00:00Z": day out of range'],
  ['2026-11-24T24:00:00Z', T, 'parsing time "2026-11-24T24:00:00Z": hour out of range'],
  ['2026-11-24T04:60:00Z', T, 'parsing time "2026-11-24T04:60:00Z": minute out of range'],
  ['2026-11-24T04:30:60Z', T, 'parsing time "2026-11-24T04:30:60Z": second out of range'],
  ['2026-11-24T04:30:28+25:00', T, 'parsing time "2026-11-24T04:30:28+25:00": time zone offset hour out of range'],
  ['2026-11-24T04:30:28Zjunk', T, 'parsing time "2026-11-24T04:30:28Zjunk": extra text: "junk"'],
];

describe('Go time.Parse with the metav1.Time and MicroTime layouts', () => {
  it.each(parsed)('%s (%s) is %s / %s', (value, layout, time, micro) => {
    const t = parseGoTime(value, layout);
    expect(formatTime(t)).toBe(time);
    expect(formatMicroTime(t)).toBe(micro);
    expect(isZeroTime(t)).toBe(false);
  });

  it.each(refused)('%s (%s) is refused', (value, layout, message) => {
    expect(() => parseGoTime(value, layout)).toThrow(new Error(message));
  });

  it('knows the zero time, which metav1 writes as null', () => {
    expect(isZeroTime(parseGoTime('0001-01-01T00:00:00Z', T))).toBe(true);
    expect(isZeroTime(parseGoTime('0001-01-01T01:00:00+01:00', T))).toBe(true);
  });
});

describe('isCanonicalTime', () => {
  /** What the decoder writes for `value`: the formatted parse, null for the zero time, or the parse error. */
  const decoded = (value: string, layout: typeof T | typeof M): string | null => {
    try {
      const t = parseGoTime(value, layout);
      if (isZeroTime(t)) return null;
      return layout === T ? formatTime(t) : formatMicroTime(t);
    } catch (err) {
      return `error: ${String(err)}`;
    }
  };

  it('holds exactly where the decoder would give the value back unchanged', () => {
    // Instants spread over years 1..9999 (leap days and the last second of a day included), each
    // formatted both ways, plus near-misses of each: a value the check accepts must decode to itself.
    const values: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const d = new Date(Date.UTC(2000, 0, 1));
      d.setUTCFullYear(1 + ((i * 7919) % 9999), (i * 31) % 12, 1 + ((i * 17) % 31));
      d.setUTCHours((i * 5) % 24, (i * 13) % 60, (i * 29) % 60, (i * 37) % 1000);
      const t = { seconds: Math.floor(d.getTime() / 1000), nanos: ((i * 37) % 1000) * 1_000_000 + ((i * 7) % 1000) * 1000 };
      values.push(formatTime(t), formatMicroTime(t));
    }
    values.push(...['2024-02-29T00:00:00Z', '2026-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2000-02-29T23:59:59Z', '2026-04-31T00:00:00Z', '2026-00-10T00:00:00Z', '2026-11-00T00:00:00Z']);
    values.push(...['2026-11-24T24:00:00Z', '2026-11-24T04:60:00Z', '2026-11-24T04:30:60Z', '2026-11-24T04:30:28+00:00', '2026-11-24T4:30:28Z', '2026-11-24T04:30:28.5Z']);
    values.push(...['2026-11-24T04:30:28.123Z', '2026-11-24T04:30:28.123456789Z', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000000Z', '0001-01-01T00:00:00.000001Z', '0000-06-01T00:00:00Z']);
    values.push(...[...parsed, ...refused].map(([v]) => v));
    let canonical = 0;
    for (const v of values) {
      for (const layout of [T, M] as const) {
        if (!isCanonicalTime(v, layout)) continue;
        canonical++;
        expect([v, layout, decoded(v, layout)]).toEqual([v, layout, v]);
      }
    }
    // Every formatted instant is canonical for its own layout.
    expect(canonical).toBeGreaterThanOrEqual(6000);
  });

  it('leaves what the decoder would change or refuse to the full parse', () => {
    for (const [v, layout] of [
      ['0001-01-01T00:00:00Z', T],
      ['0001-01-01T00:00:00.000000Z', M],
      ['2026-02-29T00:00:00Z', T],
      ['2026-11-24T24:00:00Z', T],
      ['2026-11-24T04:30:28+00:00', T],
      ['2026-11-24T04:30:28.5Z', T],
      ['2026-11-24T04:30:28Z', M],
      ['2026-11-24T04:30:28.123Z', M],
    ] as const) {
      expect([v, layout, isCanonicalTime(v, layout)]).toEqual([v, layout, false]);
    }
    expect(isCanonicalTime('2026-11-24T04:30:28Z', T)).toBe(true);
    expect(isCanonicalTime('2026-11-24T04:30:28.123456Z', M)).toBe(true);
  });
});

describe('timestampSeconds', () => {
  it('formats each instant to its own second, whatever came before', () => {
    const instants = ['2026-11-26T19:31:31.999Z', '2026-11-26T19:31:31.000Z', '2026-11-26T19:31:32.001Z', '2026-11-26T19:31:31.500Z', '1970-01-01T00:00:00.000Z', '0050-06-01T00:00:00.250Z', '2026-11-26T19:31:32.999Z'];
    expect(instants.map((t) => timestampSeconds(new Date(t)))).toEqual([
      '2026-11-26T19:31:31Z',
      '2026-11-26T19:31:31Z',
      '2026-11-26T19:31:32Z',
      '2026-11-26T19:31:31Z',
      '1970-01-01T00:00:00Z',
      '0050-06-01T00:00:00Z',
      '2026-11-26T19:31:32Z',
    ]);
  });

  it('refuses an invalid date every time, after a valid one', () => {
    timestampSeconds(new Date('2026-11-26T19:31:31Z'));
    expect(() => timestampSeconds(new Date(NaN))).toThrow(RangeError);
    expect(() => timestampSeconds(new Date(NaN))).toThrow(RangeError);
  });
});
