/**
 * JSON request bodies as kube-apiserver reads them: Go's encoding/json error texts for malformed
 * input, and the duplicate-field report of strict decoding (`fieldValidation=Warn|Strict`).
 *
 * Hot path: every write goes through here. The fast path is JSON.parse plus one indexOf-driven
 * pass counting object keys in the text; only when that count exceeds the parsed tree's key
 * count (i.e. some key repeated) does the slower path-tracking scan run. A create or update body
 * counts its tree's keys in the decode's one walk (object-decode.ts); other bodies here.
 */
import { errors } from '../http/errors.js';
import { NestingTooDeep, walkObject } from '../openapi/schema-walk.js';
import { goJsonSyntaxError } from './json-syntax.js';
import { MAX_NESTING_DEPTH } from './depth.js';

export interface StrictJson {
  value: unknown;
  /** Dotted paths of repeated keys, e.g. `metadata.name`, `spec.containers[0].image`. */
  duplicateFields: string[];
}

export interface ParseJsonOptions {
  /**
   * The kind the body must decode to. When given, syntax errors are worded as the create/update
   * decoder words them: `the object provided is unrecognized (must be of type <Kind>): ...`.
   */
  kind?: string;
}

/** The strict-decoding text for one duplicate: `duplicate field "<path>"`. */
export function duplicateFieldMessage(path: string): string {
  return `duplicate field "${path}"`;
}

/** JSON.parse, failing with Go's syntax error for the text. */
export function parseJson(text: string, opts: ParseJsonOptions = {}): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw syntaxError(goJsonSyntaxError(text) ?? (e as Error).message, text, opts);
  }
}

/** The error for JSON text nested past the cap, in Go's syntax-error words. */
export function nestingError(text: string, opts: ParseJsonOptions = {}): Error {
  return syntaxError(goJsonSyntaxError(text) ?? 'exceeded max depth', text, opts);
}

/** The repeated keys of `text`, given how many keys its parsed tree has. */
export function duplicateFields(text: string, treeKeys: number): string[] {
  return countTextKeys(text) === treeKeys ? [] : findDuplicates(text);
}

export function parseJsonStrict(text: string, opts: ParseJsonOptions = {}): StrictJson {
  const value = parseJson(text, opts);
  let treeKeys: number;
  try {
    treeKeys = walkObject(value, undefined, {}, { maxDepth: MAX_NESTING_DEPTH });
  } catch (e) {
    if (e instanceof NestingTooDeep) throw nestingError(text, opts);
    throw e;
  }
  return { value, duplicateFields: duplicateFields(text, treeKeys) };
}

function syntaxError(message: string, text: string, opts: ParseJsonOptions): Error {
  if (!opts.kind) return errors.badRequest(message);
  return unrecognizedObject(opts.kind, `couldn't get version/kind; json parse error: ${message}`, text);
}

/**
 * The create/update decoder's 400 when it cannot even read the body's apiVersion and kind
 * (transformDecodeError without a kind), with upstream's summary of the body.
 */
export function unrecognizedObject(kind: string, message: string, text: string): Error {
  return errors.badRequest(`the object provided is unrecognized (must be of type ${kind}): ${message} (${summarize(text)})`);
}

/** summarizeData: the first 30 bytes, verbatim for an object and hex otherwise. */
function summarize(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length === 0) return '<empty>';
  const head = bytes.subarray(0, 30);
  const more = bytes.length > 30 ? ' ...' : '';
  return text.startsWith('{') ? `${head.toString('utf8')}${more}` : `${head.toString('hex')}${more}`;
}

/** Strings followed by `:` in (already valid) JSON text: the number of object keys written. */
function countTextKeys(text: string): number {
  let keys = 0;
  let i = text.indexOf('"');
  while (i >= 0) {
    const end = stringEnd(text, i);
    let j = end + 1;
    while (j < text.length && isSpace(text.charCodeAt(j))) j++;
    if (text.charCodeAt(j) === 0x3a) keys++;
    i = text.indexOf('"', end + 1);
  }
  return keys;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Index of the quote closing the string opened at `open`. */
function stringEnd(text: string, open: number): number {
  let k = text.indexOf('"', open + 1);
  for (;;) {
    let slashes = 0;
    while (text.charCodeAt(k - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return k;
    k = text.indexOf('"', k + 1);
  }
}

interface Frame {
  keys?: Set<string>;
  path: string;
  index: number;
  key?: string;
}

function childPath(f: Frame): string {
  if (f.keys) return f.path ? `${f.path}.${f.key ?? ''}` : (f.key ?? '');
  return `${f.path}[${f.index}]`;
}

/** The slow path: walk valid JSON once, tracking each object's keys and the current path. */
function findDuplicates(text: string): string[] {
  const out: string[] = [];
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (expectKey && top) {
        const duplicate = recordKey(top, JSON.parse(text.slice(i, end + 1)) as string);
        if (duplicate) out.push(duplicate);
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      stack.push({ keys: c === 0x7b ? new Set() : undefined, path: top ? childPath(top) : '', index: 0 });
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c && top) {
      expectKey = nextItem(top);
    }
  }
  return out;
}

/** Notes a key of an object; returns its path if the object already had it. */
function recordKey(frame: Frame, key: string): string | undefined {
  frame.key = key;
  if (!frame.keys || !frame.keys.has(key)) {
    frame.keys?.add(key);
    return undefined;
  }
  return childPath(frame);
}

/** After a comma: an object expects a key next, an array moves to its next index. */
function nextItem(frame: Frame): boolean {
  if (frame.keys) return true;
  frame.index++;
  return false;
}

export { goJsonSyntaxError };
