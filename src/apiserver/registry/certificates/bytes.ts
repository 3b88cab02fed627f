/**
 * The []byte fields of a CSR (spec.request, status.certificate) as JSON carries them: base64 text.
 * kube-apiserver decodes them with Go's base64.StdEncoding while decoding the body, so invalid text
 * is a 400 BadRequest before any validation runs; this reproduces that decoder and its messages.
 */
import { errors } from '../../http/errors.js';
import { goJsonKind } from '../../../lib/json.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DECODE = new Map<number, number>([...ALPHABET].map((c, i) => [c.charCodeAt(0), i]));
const PAD = 0x3d; // '='
const isNewline = (c: number | undefined): boolean => c === 0x0a || c === 0x0d;

/** Go's base64.CorruptInputError. */
export class Base64Error extends Error {
  constructor(readonly offset: number) {
    super(`illegal base64 data at input byte ${offset}`);
    this.name = 'Base64Error';
  }
}

/** Skips CR/LF from `si`. */
function skipNewlines(src: Buffer, si: number): number {
  while (si < src.length && isNewline(src[si])) si++;
  return si;
}

/**
 * After a '=' at quantum position j (2 or 3): checks the rest of the padding and that nothing
 * but newlines follows. Returns nothing; throws Go's CorruptInputError offsets.
 */
function checkPadding(src: Buffer, si: number, j: number): void {
  if (j === 2) {
    si = skipNewlines(src, si);
    if (si === src.length) throw new Base64Error(src.length);
    if (src[si] !== PAD) throw new Base64Error(si - 1);
    si++;
  }
  si = skipNewlines(src, si);
  if (si < src.length) throw new Base64Error(si);
}

interface Quantum {
  values: number[];
  /** Input position after the quantum. */
  next: number;
  /** Number of base64 characters before padding (4 without padding). */
  length: number;
}

/** Reads up to four base64 characters from `si`; undefined at the clean end of input. */
function readQuantum(src: Buffer, si: number): Quantum | undefined {
  const values: number[] = [];
  while (values.length < 4) {
    if (si === src.length) {
      if (values.length === 0) return undefined;
      throw new Base64Error(si - values.length);
    }
    const c = src[si] as number;
    si++;
    const v = DECODE.get(c);
    if (v !== undefined) values.push(v);
    else if (isNewline(c)) continue;
    else if (c !== PAD || values.length < 2) throw new Base64Error(si - 1);
    else {
      checkPadding(src, si, values.length);
      return { values, next: src.length, length: values.length };
    }
  }
  return { values, next: si, length: 4 };
}

/**
 * base64.StdEncoding.DecodeString: padding required, CR/LF ignored anywhere, anything after the
 * padding is an error, non-zero trailing bits are tolerated. Offsets in errors are Go's.
 */
export function decodeStdBase64(text: string): Buffer {
  return decoded(text).bytes;
}

/** Go's decoder, for text that is not canonical padded base64. */
function goDecode(text: string): Buffer {
  const src = Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (let q = readQuantum(src, 0); q; q = readQuantum(src, q.next)) {
    const [a = 0, b = 0, c = 0, d = 0] = q.values;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out.push((n >> 16) & 0xff);
    if (q.length > 2) out.push((n >> 8) & 0xff);
    if (q.length > 3) out.push(n & 0xff);
  }
  return Buffer.from(out);
}

/** One decoded text. The bytes are shared by every caller: read them, never write them. */
interface Decoded {
  text: string;
  bytes: Buffer;
  /** Whether `text` is exactly what Go would print for the bytes. */
  canonical: boolean;
  /** The bytes as latin1 text (one character per byte), made when first asked for. */
  latin1?: string;
}

/**
 * The most recent decodes. One CSR write reads its []byte fields five or six times (the decoder's
 * check, the canonical form, validation's comparisons and PEM checks, admission's sign check), and
 * each is a 1-2 KB text; remembering the last few texts makes that one decode per field per write.
 * The bytes are a function of the text, so a hit changes nothing but the cost.
 */
const recent: Decoded[] = [];
const RECENT = 4;

function decoded(text: string): Decoded {
  for (const d of recent) if (d.text === text) return d;
  // Canonical padded base64 (what clients send) decodes the same in node, and is exactly the text that
  // node's decode encodes back to itself. Testing the ~1.3 KB text with a regular expression first
  // cost about ten times this decode and encode. Anything else takes Go's decoder, with Go's errors.
  let bytes: Buffer = Buffer.from(text, 'base64');
  const canonical = bytes.toString('base64') === text;
  if (!canonical) bytes = goDecode(text);
  const d: Decoded = { text, bytes, canonical };
  if (recent.unshift(d) > RECENT) recent.pop();
  return d;
}

const EMPTY: Decoded = { text: '', bytes: Buffer.alloc(0), canonical: true, latin1: '' };

/** The decode of a []byte JSON field: absent, null and "" are empty. Throws Base64Error. */
function decodedField(value: unknown): Decoded {
  if (value === undefined || value === null || value === '') return EMPTY;
  if (typeof value !== 'string') throw new TypeError('not a string');
  return decoded(value);
}

/** The bytes of a []byte JSON field: absent, null and "" are empty. Throws Base64Error. Read only. */
export function fieldBytes(value: unknown): Buffer {
  return decodedField(value).bytes;
}

/** The PEM text held by a []byte field; latin1 keeps every byte as one character. */
export function bytesText(value: unknown): string {
  const d = decodedField(value);
  return (d.latin1 ??= d.bytes.toString('latin1'));
}

/** A []byte field re-encoded as Go prints it (canonical base64), undefined when empty. */
export function canonicalBytes(value: unknown): string | undefined {
  const d = decodedField(value);
  if (d.bytes.length === 0) return undefined;
  return d.canonical ? d.text : d.bytes.toString('base64');
}

/** Whether two []byte JSON fields hold the same bytes (Go's bytes.Equal: nil equals empty). */
export function sameBytes(a: unknown, b: unknown): boolean {
  return fieldBytes(a).equals(fieldBytes(b));
}

/** One []byte field of a body: its value, the Go struct holding it and its JSON path. */
export type ByteField = [value: unknown, goType: string, path: string];

/**
 * The decode step upstream runs before any strategy: each []byte field must be a string of valid
 * base64. Throws the 400 that the body decoder gives (`... cannot be handled as a ...: <why>`).
 */
export function checkByteFields(kind: string, version: string, fields: readonly ByteField[]): void {
  for (const [value, goType, path] of fields) {
    try {
      fieldBytes(value);
    } catch (err) {
      const why =
        err instanceof Base64Error
          ? err.message
          : `json: cannot unmarshal ${goJsonKind(value)} into Go struct field ${goType}.${path} of type []uint8`;
      throw errors.badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${why}`);
    }
  }
}

/** checkByteFields for a CertificateSigningRequest's spec.request and status.certificate. */
export function checkBytesFields(obj: Record<string, unknown>): void {
  const spec = obj.spec as Record<string, unknown> | undefined;
  const status = obj.status as Record<string, unknown> | undefined;
  checkByteFields('CertificateSigningRequest', 'v1', [
    [spec?.request, 'CertificateSigningRequestSpec', 'spec.request'],
    [status?.certificate, 'CertificateSigningRequestStatus', 'status.certificate'],
  ]);
}

/** Go's `%#v` of a []byte, which is how field errors print a bad spec.request. */
export function goBytesLiteral(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (const b of bytes) parts.push(`0x${b.toString(16)}`);
  return `[]byte{${parts.join(', ')}}`;
}
