/**
 * HPACK's Huffman code (RFC 7541 §5.2, Appendix B), decoding only: the client sends its header
 * strings raw, and reads what etcd's Go server (and Node's) Huffman-encode. The code is canonical
 * (codes of each length follow one another in symbol order, shorter before longer), so the
 * Appendix's table is fully given by each symbol's code length, which is all this file keeps.
 */

/** Code length in bits of symbols 0–255 and of EOS (256), from RFC 7541 Appendix B. */
// prettier-ignore
const LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];

const MAX_LENGTH = 30;
const EOS = 256;

/** The canonical code's shape: how many codes each length has, and the symbols in code order. */
const counts = new Array<number>(MAX_LENGTH + 1).fill(0);
for (const length of LENGTHS) counts[length]!++;
const symbols = LENGTHS.map((length, symbol) => ({ length, symbol }))
  .sort((a, b) => a.length - b.length || a.symbol - b.symbol)
  .map((s) => s.symbol);

/** Each symbol's code, as Appendix B lists it (right-aligned), for the tests and for reference. */
export function huffmanCode(symbol: number): { code: number; length: number } {
  let code = 0;
  let index = 0;
  for (let length = 1; length <= MAX_LENGTH; length++) {
    const count = counts[length]!;
    const at = symbols.indexOf(symbol, index);
    if (at < index + count) return { code: code + (at - index), length };
    code = (code + count) * 2;
    index += count;
  }
  throw new Error(`no Huffman code for ${symbol}`);
}

/**
 * Decodes a Huffman-encoded string (RFC 7541 §5.2). Throws, as a COMPRESSION_ERROR, on EOS inside
 * the string or on padding that is longer than 7 bits or not the EOS code's leading ones.
 */
export function huffmanDecode(data: Buffer, start: number, end: number): string {
  const out: number[] = [];
  // The canonical walk: at each length, codes from `first` on with `count` entries are that length's.
  let code = 0;
  let first = 0;
  let index = 0;
  let length = 0;
  let ones = true;
  for (let i = start; i < end; i++) {
    const byte = data[i]!;
    for (let bit = 7; bit >= 0; bit--) {
      const b = (byte >> bit) & 1;
      code = code * 2 + b;
      ones &&= b === 1;
      length++;
      const count = counts[length]!;
      if (code - first < count) {
        const symbol = symbols[index + code - first]!;
        if (symbol === EOS) throw new Error('HPACK: EOS inside a Huffman-encoded string');
        out.push(symbol);
        code = first = index = length = 0;
        ones = true;
        continue;
      }
      first = (first + count) * 2;
      index += count;
    }
  }
  if (length > 7 || !ones) throw new Error('HPACK: invalid Huffman padding');
  return Buffer.from(out).toString('latin1');
}
