/**
 * Go encoding/json's syntax errors, reproduced for bodies JSON.parse rejected: kube-apiserver
 * returns these texts in 400s (`invalid character 'x' looking for beginning of value`, ...).
 * Only run on the error path, so clarity wins over speed; iterative, so deep input is safe.
 */
import { MAX_NESTING_DEPTH } from './depth.js';

/** Go's quoteChar for the offending byte: the first UTF-8 byte, shown as strconv.Quote would. */
export function quoteChar(text: string, i: number): string {
  const cp = text.codePointAt(i) ?? 0;
  const b = cp < 0x80 ? cp : cp < 0x800 ? 0xc0 | (cp >> 6) : cp < 0x10000 ? 0xe0 | (cp >> 12) : 0xf0 | (cp >> 18);
  if (b === 0x27) return "'\\''";
  if (b === 0x22) return `'"'`;
  if (b === 0x5c) return "'\\\\'";
  const named: Record<number, string> = { 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r' };
  if (named[b]) return `'\\${named[b]}'`;
  if (b < 0x20 || b === 0x7f) return `'\\x${b.toString(16).padStart(2, '0')}'`;
  if ((b >= 0x80 && b <= 0xa0) || b === 0xad) return `'\\u00${b.toString(16).padStart(2, '0')}'`;
  return `'${String.fromCharCode(b)}'`;
}

class SyntaxFailure extends Error {}

const isSpace = (c: string): boolean => c === ' ' || c === '\n' || c === '\r' || c === '\t';
const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isHex = (c: string): boolean => /^[0-9a-fA-F]$/.test(c);

class Scanner {
  i = 0;
  constructor(private readonly s: string) {}

  fail(context: string): never {
    if (this.i >= this.s.length) throw new SyntaxFailure('unexpected end of JSON input');
    throw new SyntaxFailure(`invalid character ${quoteChar(this.s, this.i)} ${context}`);
  }
  peek(): string {
    return this.s.charAt(this.i);
  }
  skipSpace(): void {
    while (this.i < this.s.length && isSpace(this.s.charAt(this.i))) this.i++;
  }

  string(): void {
    this.i++; // opening quote
    for (;;) {
      if (this.i >= this.s.length) this.fail('');
      const c = this.s.charAt(this.i);
      if (c === '"') {
        this.i++;
        return;
      }
      if (c.charCodeAt(0) < 0x20) this.fail('in string literal');
      this.i++;
      if (c !== '\\') continue;
      const e = this.peek();
      if (e === 'u') {
        this.i++;
        for (let k = 0; k < 4; k++, this.i++) if (!isHex(this.peek())) this.fail('in \\u hexadecimal character escape');
      } else if ('"\\/bfnrt'.includes(e) && e !== '') {
        this.i++;
      } else {
        this.fail('in string escape code');
      }
    }
  }

  digits(context: string): void {
    if (!isDigit(this.peek())) this.fail(context);
    while (isDigit(this.peek())) this.i++;
  }

  number(): void {
    if (this.peek() === '-') {
      this.i++;
      if (!isDigit(this.peek())) this.fail('in numeric literal');
    }
    if (this.peek() === '0') this.i++;
    else this.digits('in numeric literal');
    if (this.peek() === '.') {
      this.i++;
      this.digits('after decimal point in numeric literal');
    }
    if (this.peek() === 'e' || this.peek() === 'E') {
      this.i++;
      if (this.peek() === '+' || this.peek() === '-') this.i++;
      this.digits('in exponent of numeric literal');
    }
  }

  literal(word: string): void {
    this.i++;
    for (const expected of word.slice(1)) {
      if (this.peek() !== expected) this.fail(`in literal ${word} (expecting '${expected}')`);
      this.i++;
    }
  }

  /** A scalar is consumed whole; a container is only opened (pushed onto `stack`). Returns whether a value still follows. */
  beginValue(stack: string[]): boolean {
    this.skipSpace();
    const c = this.peek();
    if (c === '{' || c === '[') {
      if (stack.length >= MAX_NESTING_DEPTH) this.fail('exceeded max depth');
      this.i++;
      this.skipSpace();
      if (this.peek() === (c === '{' ? '}' : ']')) {
        this.i++;
        return false;
      }
      stack.push(c);
      if (c === '{') this.key();
      return true;
    }
    if (c === '"') this.string();
    else if (c === '-' || isDigit(c)) this.number();
    else if (c === 't') this.literal('true');
    else if (c === 'f') this.literal('false');
    else if (c === 'n') this.literal('null');
    else this.fail('looking for beginning of value');
    return false;
  }

  key(): void {
    this.skipSpace();
    if (this.peek() !== '"') this.fail('looking for beginning of object key string');
    this.string();
    this.skipSpace();
    if (this.peek() !== ':') this.fail('after object key');
    this.i++;
  }
}

/** The error Go's json.Unmarshal reports for `text`, or undefined if it is valid JSON. */
export function goJsonSyntaxError(text: string): string | undefined {
  const sc = new Scanner(text);
  const stack: string[] = [];
  try {
    // Nesting is tracked on `stack`, never on the call stack.
    let needValue = true;
    while (needValue || stack.length > 0) {
      if (needValue) {
        needValue = sc.beginValue(stack);
        continue;
      }
      sc.skipSpace();
      const top = stack[stack.length - 1];
      const c = sc.peek();
      if (c === ',') {
        sc.i++;
        if (top === '{') sc.key();
        needValue = true;
      } else if ((top === '{' && c === '}') || (top === '[' && c === ']')) {
        sc.i++;
        stack.pop();
      } else {
        sc.fail(top === '{' ? 'after object key:value pair' : 'after array element');
      }
    }
    sc.skipSpace();
    if (sc.i < text.length) sc.fail('after top-level value');
    return undefined;
  } catch (e) {
    if (e instanceof SyntaxFailure) return e.message;
    throw e;
  }
}
