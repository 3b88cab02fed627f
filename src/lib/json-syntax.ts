/**
 * Whether a text is JSON (RFC 8259) as JSON.parse accepts it, checked without building its value:
 * for text relayed as it is (an etcd value another tool may have written) that must reach clients
 * only as JSON. One pass, no recursion (nesting depth costs a stack entry, never the call stack).
 */

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

const OBJECT = 1;
const ARRAY = 2;

const isDigit = (c: number): boolean => c >= ZERO && c <= NINE;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** The characters a backslash may escape other than `u`: " \ / b f n r t. */
const isEscape = (c: number): boolean => c === QUOTE || c === BACKSLASH || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74;

function skipSpace(text: string, i: number): number {
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return i;
  }
  return i;
}

/** Strings at least this long are checked by JSON.parse, whose native scan beats a loop here (base64 fields). */
const LONG_STRING = 64;

/** The index of the quote closing the string opening at `i`: the first one after an even run of backslashes; -1 if none. */
function closingQuote(text: string, i: number): number {
  let q = text.indexOf('"', i + 1);
  for (;;) {
    if (q < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q;
    q = text.indexOf('"', q + 1);
  }
}

/** Whether the characters from `i` to `end` hold no control character and only valid escapes. */
function validContent(text: string, i: number, end: number): boolean {
  for (let j = i; j < end; j++) {
    const c = text.charCodeAt(j);
    if (c < SPACE) return false;
    if (c !== BACKSLASH) continue;
    const e = text.charCodeAt(++j);
    if (e === 0x75) {
      if (!(isHex(text.charCodeAt(j + 1)) && isHex(text.charCodeAt(j + 2)) && isHex(text.charCodeAt(j + 3)) && isHex(text.charCodeAt(j + 4)))) return false;
      j += 4;
    } else if (!isEscape(e)) return false;
  }
  return true;
}

/** The index after the string opening at `i`, or -1 when it is not a valid JSON string. */
function stringEnd(text: string, i: number): number {
  const q = closingQuote(text, i);
  if (q < 0) return -1;
  if (q - i < LONG_STRING) return validContent(text, i + 1, q) ? q + 1 : -1;
  try {
    JSON.parse(text.slice(i, q + 1));
    return q + 1;
  } catch {
    return -1;
  }
}

/** The index after the digits from `i` (at least one), or -1. */
function digitsEnd(text: string, i: number): number {
  if (!isDigit(text.charCodeAt(i))) return -1;
  while (isDigit(text.charCodeAt(++i)));
  return i;
}

/** The index after the number starting at `i`, or -1. */
function numberEnd(text: string, i: number): number {
  if (text.charCodeAt(i) === MINUS) i++;
  if (text.charCodeAt(i) === ZERO) i++;
  else if ((i = digitsEnd(text, i)) < 0) return -1;
  if (text.charCodeAt(i) === DOT && (i = digitsEnd(text, i + 1)) < 0) return -1;
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    const sign = text.charCodeAt(i + 1);
    i = digitsEnd(text, sign === PLUS || sign === MINUS ? i + 2 : i + 1);
  }
  return i;
}

/** The index after the scalar (string, number, true, false, null) starting at `i`, or -1. */
function scalarEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === MINUS || isDigit(c)) return numberEnd(text, i);
  const word = c === 0x74 ? 'true' : c === 0x66 ? 'false' : c === 0x6e ? 'null' : undefined;
  return word !== undefined && text.startsWith(word, i) ? i + word.length : -1;
}

/** After every value the text is complete. */
const COMPLETE = -2;

export function isJsonText(text: string): boolean {
  const open: number[] = [];
  let i = skipSpace(text, 0);
  // Each turn reads one value at `i`, then moves to the next value (or finds the text complete).
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      i = skipSpace(text, i + 1);
      if (text.charCodeAt(i) !== (c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET)) {
        open.push(c === OPEN_BRACE ? OBJECT : ARRAY);
        if (c === OPEN_BRACE && (i = memberValue(text, i)) < 0) return false;
        continue;
      }
      i++;
    } else if ((i = scalarEnd(text, i)) < 0) return false;
    i = nextValue(text, i, open);
    if (i < 0) return i === COMPLETE;
  }
}

/**
 * After a value ending at `i`: closes what ends there, then returns where the next value starts
 * (after a comma, and a member's name), COMPLETE when the text ends with the last closing, or -1.
 */
function nextValue(text: string, i: number, open: number[]): number {
  for (;;) {
    i = skipSpace(text, i);
    const top = open[open.length - 1];
    if (top === undefined) return i === text.length ? COMPLETE : -1;
    const next = text.charCodeAt(i);
    if (next === COMMA) {
      i = skipSpace(text, i + 1);
      return top === OBJECT ? memberValue(text, i) : i;
    }
    if (next !== (top === OBJECT ? CLOSE_BRACE : CLOSE_BRACKET)) return -1;
    open.pop();
    i++;
  }
}

/** From a member's name at `i` to the start of its value, or -1 when there is no `"name" :`. */
function memberValue(text: string, i: number): number {
  if (text.charCodeAt(i) !== QUOTE || (i = stringEnd(text, i)) < 0) return -1;
  i = skipSpace(text, i);
  return text.charCodeAt(i) === COLON ? skipSpace(text, i + 1) : -1;
}
