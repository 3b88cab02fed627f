/**
 * Label selectors (`labelSelector=`), with apimachinery's grammar and its exact error texts:
 * kubectl shows the server's message verbatim, and client tests match on it.
 *
 *   selector    := requirement (',' requirement)*
 *   requirement := ['!'] KEY [ ('='|'=='|'!='|'>'|'<') VALUE | ('in'|'notin') '(' VALUE (',' VALUE)* ')' ]
 */
import { ApiError, errors } from '../http/errors.js';
import { type FieldError, fieldErrorString, invalid } from '../http/field-errors.js';
import { isQualifiedName, isValidLabelValue } from '../validation/names.js';

export type LabelOperator = 'exists' | '!' | '=' | '==' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  /** Sorted and de-duplicated, as upstream's string set lists them. */
  values: string[];
}

export interface LabelSelector {
  /** Requirements sorted by key. */
  readonly requirements: readonly LabelRequirement[];
  /** True when the selector selects everything. */
  readonly empty: boolean;
  matches(labels: Record<string, string> | undefined): boolean;
}

type Tok = 'id' | 'eos' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<' | 'in' | 'notin';
interface Token {
  tok: Tok;
  lit: string;
}

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const SYMBOLS = new Set(['=', '==', '!', '!=', '(', ')', ',', '>', '<']);
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

/** Upstream reads bytes and treats a NUL as the end of input. */
function lex(input: string): Token[] {
  const end = input.indexOf('\0');
  const s = end >= 0 ? input.slice(0, end) : input;
  const out: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isSpace(s.charAt(i))) i++;
    if (i >= s.length) {
      out.push({ tok: 'eos', lit: '' });
      return out;
    }
    const start = i;
    if (SPECIAL.has(s.charAt(i))) {
      // Longest run of symbol characters that still forms a known operator.
      let lit = s.charAt(i++);
      while (i < s.length && SYMBOLS.has(lit + s.charAt(i))) lit += s.charAt(i++);
      out.push({ tok: lit as Tok, lit });
      continue;
    }
    while (i < s.length && !SPECIAL.has(s.charAt(i)) && !isSpace(s.charAt(i))) i++;
    const lit = s.slice(start, i);
    out.push({ tok: lit === 'in' || lit === 'notin' ? lit : 'id', lit });
  }
}

class Parser {
  private pos = 0;
  constructor(private readonly items: Token[]) {}

  /** In value context the keywords `in`/`notin` are ordinary identifiers. */
  peek(values = true): Token {
    return this.adjust(this.items[Math.min(this.pos, this.items.length - 1)] as Token, values);
  }
  next(values = true): Token {
    const t = this.peek(values);
    this.pos++;
    return t;
  }
  private adjust(t: Token, values: boolean): Token {
    return values && (t.tok === 'in' || t.tok === 'notin') ? { tok: 'id', lit: t.lit } : t;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.peek();
      if (tok === 'eos') return reqs;
      if (tok !== 'id' && tok !== '!') throw new Error(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.requirement());
      } catch (e) {
        throw new Error(`unable to parse requirement: ${(e as Error).message}`, { cause: e });
      }
      const t = this.next();
      if (t.tok === 'eos') return reqs;
      if (t.tok !== ',') throw new Error(`found '${t.lit}', expected: ',' or 'end of string'`);
      const t2 = this.peek();
      if (t2.tok !== 'id' && t2.tok !== '!') throw new Error(`found '${t2.lit}', expected: identifier after ','`);
    }
  }

  private requirement(): LabelRequirement {
    let t = this.next();
    const negated = t.tok === '!';
    if (negated) t = this.next();
    if (t.tok !== 'id') throw new Error(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length > 0) throw new Error(fieldErrorString(invalid('<nil>', key, keyErrs.join('; '))));
    const after = this.peek().tok;
    if (negated) return newRequirement(key, '!', []);
    if (after === 'eos' || after === ',') return newRequirement(key, 'exists', []);
    const op = this.operator();
    const values = op === 'in' || op === 'notin' ? this.setValues() : this.exactValue();
    return newRequirement(key, op, [...new Set(values)].sort());
  }

  private operator(): LabelOperator {
    const { tok, lit } = this.next(false);
    switch (tok) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        return tok;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new Error(`found '${lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  private setValues(): string[] {
    const open = this.next();
    if (open.tok !== '(') throw new Error(`found '${open.lit}' expected: '('`);
    const first = this.peek();
    if (first.tok === ')') {
      this.next();
      return [''];
    }
    if (first.tok !== 'id' && first.tok !== ',') throw new Error(`found '${first.lit}', expected: ',', ')' or identifier`);
    const values = this.identifierList();
    if (this.next().tok !== ')') throw new Error(`found '${first.lit}', expected: ')'`);
    return values;
  }

  /** A comma list where empty items stand for the empty value: `(a,,b)`, `(,a)`, `(a,)`. */
  private identifierList(): string[] {
    const values: string[] = [];
    for (;;) {
      const t = this.next();
      if (t.tok === 'id') {
        values.push(t.lit);
        const t2 = this.peek();
        if (t2.tok === ',') continue;
        if (t2.tok === ')') return values;
        throw new Error(`found '${t2.lit}', expected: ',' or ')'`);
      }
      if (t.tok !== ',') throw new Error(`found '${t.lit}', expected: ',', or identifier`);
      if (values.length === 0) values.push('');
      const t2 = this.peek().tok;
      if (t2 === ')') {
        values.push('');
        return values;
      }
      if (t2 === ',') {
        this.next();
        values.push('');
      }
    }
  }

  private exactValue(): string[] {
    const ahead = this.peek();
    if (ahead.tok === 'eos' || ahead.tok === ',') return [''];
    const t = this.next();
    if (t.tok === 'id') return [t.lit];
    throw new Error(`found '${t.lit}', expected: identifier`);
  }
}

const INT64 = /^[+-]?[0-9]+$/;
const INT64_MAX = 2n ** 63n - 1n;
function parseInt64(s: string): bigint | undefined {
  if (!INT64.test(s)) return undefined;
  const v = BigInt(s);
  return v > INT64_MAX || v < -INT64_MAX - 1n ? undefined : v;
}

/** labels.NewRequirement's checks, joined as an aggregate error. */
function newRequirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errs: FieldError[] = [];
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined) {
        errs.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      }
    });
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length > 0) errs.push(invalid(`values[${i}][${key}]`, v, msgs.join('; ')));
  });
  if (errs.length > 0) {
    const texts = [...new Set(errs.map(fieldErrorString))];
    throw new Error(texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`);
  }
  return { key, operator, values };
}

export function requirementMatches(r: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(value as string);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value as string);
    case 'gt':
    case 'lt':
      return has && compares(r, value as string);
  }
}

/** Gt/Lt: both sides must parse as int64, else the requirement does not match. */
function compares(r: LabelRequirement, value: string): boolean {
  const have = parseInt64(value);
  const want = parseInt64(r.values[0] ?? '');
  if (have === undefined || want === undefined || r.values.length !== 1) return false;
  return r.operator === 'gt' ? have > want : have < want;
}

/** Parses a selector; any syntax or validation failure is a 400 with upstream's message. */
export function parseLabelSelector(text: string): LabelSelector {
  let requirements: LabelRequirement[];
  try {
    requirements = new Parser(lex(text)).parse();
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw errors.badRequest((e as Error).message);
  }
  requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels ?? {})),
  };
}
