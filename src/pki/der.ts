import { PkiError } from './errors.js';

/**
 * Minimal DER reader/writer. Hand-rolled because the issuing hot path cannot afford a schema-driven
 * ASN.1 library (object allocation per node dominates the cost of a P-256 signature).
 */

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** One decoded element: `tag`, and offsets of its header start, value start and end in the buffer. */
export interface Tlv {
  tag: number;
  start: number;
  valueStart: number;
  end: number;
}

/** Reads the element at `pos`, which must end at or before `limit`. */
export function readTlv(buf: Uint8Array, pos: number, limit: number = buf.length): Tlv {
  if (pos + 2 > limit) throw malformed('truncated element');
  const tag = buf[pos] as number;
  if ((tag & 0x1f) === 0x1f) throw malformed('high tag numbers are not supported');
  let len = buf[pos + 1] as number;
  let valueStart = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw malformed('indefinite or oversized length');
    if (valueStart + n > limit) throw malformed('truncated length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (buf[valueStart + i] as number);
    valueStart += n;
  }
  const end = valueStart + len;
  if (end > limit) throw malformed('element runs past its container');
  return { tag, start: pos, valueStart, end };
}

/** Reads the element at `pos` and checks its tag. */
export function expectTlv(buf: Uint8Array, pos: number, tag: number, limit?: number): Tlv {
  const t = readTlv(buf, pos, limit);
  if (t.tag !== tag) throw malformed(`expected tag 0x${tag.toString(16)}, found 0x${t.tag.toString(16)}`);
  return t;
}

/** The direct children of a constructed element. */
export function children(buf: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let p = parent.valueStart; p < parent.end; ) {
    const c = readTlv(buf, p, parent.end);
    out.push(c);
    p = c.end;
  }
  return out;
}

export function value(buf: Uint8Array, t: Tlv): Uint8Array {
  return buf.subarray(t.valueStart, t.end);
}

export function whole(buf: Uint8Array, t: Tlv): Uint8Array {
  return buf.subarray(t.start, t.end);
}

export function decodeOid(bytes: Uint8Array): string {
  if (bytes.length === 0) throw malformed('empty object identifier');
  const parts: number[] = [];
  let v = 0;
  for (const b of bytes) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (parts.length === 0) parts.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

/** Text of an ASN.1 string element, or undefined when the tag is not a string type. */
export function decodeString(tag: number, bytes: Uint8Array): string | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (tag) {
    case TAG.UTF8_STRING:
      return b.toString('utf8');
    case TAG.PRINTABLE_STRING:
    case TAG.IA5_STRING:
    case 0x12: // NumericString
    case 0x1a: // VisibleString
    case 0x14: // T61String, read as Latin-1 like Go does
      return b.toString('latin1');
    case 0x1e: // BMPString (UTF-16BE)
      return Buffer.from(b).swap16().toString('utf16le');
    case 0x1c: // UniversalString (UTF-32BE)
      return String.fromCodePoint(...Array.from({ length: b.length / 4 }, (_, i) => b.readUInt32BE(i * 4)));
    default:
      return undefined;
  }
}

/** The error for structurally invalid DER. */
export function malformed(detail: string): PkiError {
  return new PkiError(`asn1: structure error: ${detail}`, 'malformed');
}

// ---- writer ----

function header(tag: number, len: number): Buffer {
  if (len < 0x80) return Buffer.from([tag, len]);
  if (len < 0x100) return Buffer.from([tag, 0x81, len]);
  if (len < 0x10000) return Buffer.from([tag, 0x82, len >> 8, len & 0xff]);
  return Buffer.from([tag, 0x83, len >> 16, (len >> 8) & 0xff, len & 0xff]);
}

/** An element with the given tag whose value is the concatenation of `parts`. */
export function tlv(tag: number, ...parts: Uint8Array[]): Buffer {
  let len = 0;
  for (const p of parts) len += p.length;
  return Buffer.concat([header(tag, len), ...parts], len + (len < 0x80 ? 2 : len < 0x100 ? 3 : len < 0x10000 ? 4 : 5));
}

export const seq = (...parts: Uint8Array[]): Buffer => tlv(TAG.SEQUENCE, ...parts);
export const set = (...parts: Uint8Array[]): Buffer => tlv(TAG.SET, ...parts);
/** [n] EXPLICIT, i.e. a constructed context-specific wrapper. */
export const explicit = (n: number, ...parts: Uint8Array[]): Buffer => tlv(0xa0 | n, ...parts);

const oidCache = new Map<string, Buffer>();

export function oid(dotted: string): Buffer {
  const hit = oidCache.get(dotted);
  if (hit) return hit;
  const nums = dotted.split('.').map(Number);
  const arcs = [(nums[0] ?? 0) * 40 + (nums[1] ?? 0), ...nums.slice(2)];
  const bytes: number[] = [];
  for (const arc of arcs) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  const out = tlv(TAG.OID, Buffer.from(bytes));
  oidCache.set(dotted, out);
  return out;
}

/** A non-negative INTEGER from big-endian magnitude bytes. */
export function unsignedInteger(magnitude: Uint8Array): Buffer {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const m = magnitude.subarray(i);
  return (m[0] ?? 0) & 0x80 ? tlv(TAG.INTEGER, Buffer.from([0]), m) : tlv(TAG.INTEGER, m.length ? m : Buffer.from([0]));
}

export function smallInteger(n: number): Buffer {
  const bytes: number[] = [];
  for (let v = n; ; v = Math.floor(v / 256)) {
    bytes.unshift(v & 0xff);
    if (v < 256) break;
  }
  return unsignedInteger(Buffer.from(bytes));
}

export const octetString = (bytes: Uint8Array): Buffer => tlv(TAG.OCTET_STRING, bytes);
export const bitString = (bytes: Uint8Array, unusedBits = 0): Buffer => tlv(TAG.BIT_STRING, Buffer.from([unusedBits]), bytes);
export const BOOLEAN_TRUE = Buffer.from([TAG.BOOLEAN, 1, 0xff]);
export const NULL = Buffer.from([TAG.NULL, 0]);

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** RFC 5280 validity time: UTCTime through 2049, GeneralizedTime from 2050 on; whole seconds, UTC. */
export function time(d: Date): Buffer {
  const y = d.getUTCFullYear();
  const rest = `${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}Z`;
  if (y >= 1950 && y < 2050) return tlv(TAG.UTC_TIME, Buffer.from(pad(y % 100) + rest, 'latin1'));
  return tlv(TAG.GENERALIZED_TIME, Buffer.from(pad(y, 4) + rest, 'latin1'));
}

/** Parses a UTCTime/GeneralizedTime element (the DER forms: ...Z, whole or fractional seconds). */
export function decodeTime(buf: Uint8Array, t: Tlv): Date {
  const s = Buffer.from(value(buf, t)).toString('latin1');
  const m = t.tag === TAG.UTC_TIME ? /^(\d{2})(\d{10})Z$/.exec(s) : /^(\d{4})(\d{10})(\.\d+)?Z$/.exec(s);
  if (!m) throw malformed(`invalid time ${JSON.stringify(s)}`);
  let year = Number(m[1]);
  if (t.tag === TAG.UTC_TIME) year += year < 50 ? 2000 : 1900;
  const r = m[2] as string;
  const ms = m[3] ? Math.round(Number(m[3]) * 1000) : 0;
  const num = (i: number): number => Number(r.slice(i, i + 2));
  return new Date(Date.UTC(year, num(0) - 1, num(2), num(4), num(6), num(8), ms));
}
