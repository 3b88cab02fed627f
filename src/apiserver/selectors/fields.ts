/**
 * Field selectors (`fieldSelector=`): comma-separated `f=v`, `f==v`, `f!=v`, all ANDed, with
 * apimachinery's escaping rules and error texts. Which fields a kind supports, and which of
 * upstream's two "unsupported field" messages it gives, is the caller's (see selectable-fields.ts).
 */
import type { KObject } from '../../api/meta.js';
import { errors } from '../http/errors.js';

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;
  /** A missing field reads as the empty string, as fields.Set.Get does. */
  matches(fields: Record<string, string>): boolean;
  /** The value an `f=v` term requires, if any (used to short-cut `metadata.name=x`). */
  requiresExactMatch(field: string): string | undefined;
}

/**
 * How an unsupported field is reported. Core kinds with their own field-label conversion (Pod,
 * Secret, Node, Namespace, Event, CSR) say `field label not supported: X`; the rest fall back to
 * the generic meta conversion's `"X" is not a known field selector: only ...`.
 */
export type UnknownFieldStyle = 'custom' | 'generic';

export interface FieldSelectorOptions {
  unknownFieldStyle?: UnknownFieldStyle;
}

/** Splits on unescaped commas; the backslashes stay for unescapeValue. */
function splitTerms(selector: string): string[] {
  if (selector === '') return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector.charAt(i);
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** The first operator occurrence splits the term; `!=` and `==` win over `=` at the same spot. */
function splitTerm(term: string): [string, '=' | '==' | '!=', string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of ['!=', '==', '='] as const) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

/** fields.UnescapeValue: `\\`, `\,` and `\=` only; bare `,` or `=` in a value are errors. */
export function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let escaped = false;
  for (const c of s) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw errors.badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      escaped = false;
    } else if (c === '\\') {
      escaped = true;
    } else if (c === ',' || c === '=') {
      // Go prints the rune with %v, i.e. as its code point number.
      throw errors.badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  if (escaped) throw errors.badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** fields.EscapeValue, the inverse of unescapeValue. */
export function escapeValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

function unknownField(field: string, style: UnknownFieldStyle): Error {
  if (style === 'custom') return errors.badRequest(`field label not supported: ${field}`);
  return errors.badRequest(`"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
}

/**
 * Parses a selector and checks every field against `allowed`. Terms are sorted as upstream sorts
 * them, so the first bad term reported is the same one kube-apiserver reports.
 */
export function parseFieldSelector(text: string, allowed: string[], opts: FieldSelectorOptions = {}): FieldSelector {
  const style = opts.unknownFieldStyle ?? 'custom';
  const requirements: FieldRequirement[] = [];
  const terms = splitTerms(text).sort();
  for (const term of terms) {
    if (term === '') continue;
    const parts = splitTerm(term);
    if (!parts) throw errors.badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    const [field, op, raw] = parts;
    requirements.push({ field, operator: op === '!=' ? '!=' : '=', value: unescapeValue(raw) });
  }
  for (const r of requirements) if (!allowed.includes(r.field)) throw unknownField(r.field, style);
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (fields) =>
      requirements.every((r) => ((fields[r.field] ?? '') === r.value) === (r.operator === '=')),
    requiresExactMatch: (field) => requirements.find((r) => r.field === field && r.operator === '=')?.value,
  };
}

/**
 * The selectable fields of an object: metadata.name, metadata.namespace (namespaced kinds only;
 * on cluster kinds it reads as empty) and the kind's own fields from `extra`.
 */
export function objectFields(
  obj: KObject,
  extra: Record<string, (o: KObject) => string | undefined>,
  namespaced: boolean,
): Record<string, string> {
  const out: Record<string, string> = { 'metadata.name': obj.metadata?.name ?? '' };
  if (namespaced) out['metadata.namespace'] = obj.metadata?.namespace ?? '';
  for (const [field, get] of Object.entries(extra)) out[field] = get(obj) ?? '';
  return out;
}
