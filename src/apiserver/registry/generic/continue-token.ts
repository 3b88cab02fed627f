/**
 * The continue token of a paginated list, as k8s.io/apiserver/pkg/storage's EncodeContinue and
 * DecodeContinue make and read it: unpadded base64url of the JSON `{"v":"meta.k8s.io/v1","rv":N,
 * "start":"<key after the collection prefix>"}`. A bad token is a 400 whose text is upstream's
 * (`invalid continue token: continue key is not valid: ...`), the base64 and JSON failures in Go's words.
 */
import path from 'node:path';
import { ApiError, errors } from '../../http/errors.js';
import { goJsonSyntaxError } from '../../validation/json-body.js';
import { quoteChar } from '../../validation/json-syntax.js';
import { goJsonKind } from '../../../lib/json.js';

const TOKEN_VERSION = 'meta.k8s.io/v1';
const INVALID = 'continue key is not valid';

export interface ContinueToken {
  /** The revision of the list's first page; negative: the latest (a token re-issued after compaction). */
  rv: number;
  /** The key to start after, relative to the collection prefix. */
  start: string;
}

export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, rv, start })).toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]$/;

/** base64.RawURLEncoding.DecodeString: the bytes, or Go's CorruptInputError text. */
function decodeBase64Url(token: string): Buffer | string {
  const bytes = Buffer.from(token, 'utf8');
  let chars = 0;
  let last = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = String.fromCharCode(bytes[i] ?? 0);
    // Go's decoder skips line breaks anywhere in the input.
    if (c === '\n' || c === '\r') continue;
    if (!BASE64URL.test(c)) return `illegal base64 data at input byte ${i}`;
    chars++;
    last = i;
  }
  // A lone character after the last full quantum carries too few bits for a byte.
  if (chars % 4 === 1) return `illegal base64 data at input byte ${last}`;
  return Buffer.from(bytes.toString('latin1').replace(/[\r\n]/g, ''), 'base64url');
}

/** Go's quoteChar of one byte (not of a character: garbage tokens decode to bytes that are no UTF-8). */
function quoteByte(b: number): string {
  if (b < 0x80) return quoteChar(String.fromCharCode(b), 0);
  return b <= 0xa0 || b === 0xad ? `'\\u00${b.toString(16)}'` : `'${String.fromCharCode(b)}'`;
}

/**
 * encoding/json's syntax error for `data`. The usual garbage fails at its first byte, which is named
 * byte-wise as Go does; anything else is scanned as text.
 */
function jsonSyntaxError(data: Buffer): string | undefined {
  const first = data.findIndex((b) => b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d);
  const b = first < 0 ? undefined : data[first];
  if (b !== undefined && !'{["-0123456789tfn'.includes(String.fromCharCode(b))) {
    return `invalid character ${quoteByte(b)} looking for beginning of value`;
  }
  return goJsonSyntaxError(data.toString('utf8'));
}

type TokenFields = { v: string; rv: number; start: string };

/** One key of the token object into its field (null leaves it); Go's UnmarshalTypeError text on a mismatch. */
function setField(token: TokenFields, field: keyof TokenFields, value: unknown): string | undefined {
  const goType = field === 'rv' ? 'int64' : 'string';
  const fits = field === 'rv' ? typeof value === 'number' && Number.isSafeInteger(value) : typeof value === 'string';
  if (value === null) return undefined;
  if (!fits) {
    // Go names the number only when it missed an integer field.
    const shown = typeof value === 'number' && field === 'rv' ? ` ${value}` : '';
    return `json: cannot unmarshal ${goJsonKind(value)}${shown} into Go struct field continueToken.${field} of type ${goType}`;
  }
  if (field === 'rv') token.rv = value as number;
  else token[field] = value as string;
  return undefined;
}

/** json.Unmarshal into upstream's continueToken: the fields, or Go's first UnmarshalTypeError text. */
function unmarshalToken(parsed: unknown): TokenFields | string {
  const token: TokenFields = { v: '', rv: 0, start: '' };
  if (parsed === null) return token;
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    return `json: cannot unmarshal ${goJsonKind(parsed)} into Go value of type storage.continueToken`;
  }
  let first: string | undefined;
  // Go matches keys case-insensitively; a later duplicate overwrites an earlier one.
  for (const [key, value] of Object.entries(parsed)) {
    const field = key.toLowerCase();
    if (field === 'v' || field === 'rv' || field === 'start') first ??= setField(token, field, value);
  }
  return first ?? token;
}

/** DecodeContinue, with the collection prefix left to the caller. */
export function decodeContinue(token: string): ContinueToken {
  const bad = (why: string): ApiError => errors.badRequest(`invalid continue token: ${why}`);
  const data = decodeBase64Url(token);
  if (typeof data === 'string') throw bad(`${INVALID}: ${data}`);
  const syntax = jsonSyntaxError(data);
  if (syntax !== undefined) throw bad(`${INVALID}: ${syntax}`);
  const t = unmarshalToken(JSON.parse(data.toString('utf8')));
  if (typeof t === 'string') throw bad(`${INVALID}: ${t}`);
  if (t.v !== TOKEN_VERSION) throw bad(`${INVALID}: server does not recognize this encoded version ${t.v}`);
  if (t.rv === 0) throw bad(`${INVALID}: incorrect encoded start resourceVersion (version ${TOKEN_VERSION})`);
  if (t.start === '') throw bad(`${INVALID}: encoded start key empty`);
  // A start key must not climb above the collection: it has to be clean as a path (Go's path.Clean).
  const key = t.start.startsWith('/') ? t.start : `/${t.start}`;
  if (path.posix.resolve(key) !== key) throw bad(`${INVALID}: ${t.start}`);
  return { rv: t.rv, start: key.slice(1) };
}
