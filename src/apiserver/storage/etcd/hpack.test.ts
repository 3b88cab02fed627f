import { huffmanCode, huffmanDecode } from './hpack-huffman.js';
import { type HeaderField, HpackDecoder, HpackEncoder } from './hpack.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** Huffman-encodes with the codes under test (RFC 7541 §5.2: pad with the EOS code's leading ones). */
function huffmanEncode(text: string): Buffer {
  let bits = '';
  for (const byte of Buffer.from(text, 'latin1')) {
    const { code, length } = huffmanCode(byte);
    bits += code.toString(2).padStart(length, '0');
  }
  bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '1');
  return Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => parseInt(b, 2)));
}

describe('HPACK Huffman code', () => {
  it('gives each symbol the code RFC 7541 Appendix B lists', () => {
    const listed: [number, number, number][] = [
      [0, 0x1ff8, 13], [1, 0x7fffd8, 23], [9, 0xffffea, 24], [10, 0x3ffffffc, 30], [13, 0x3ffffffd, 30], [22, 0x3ffffffe, 30],
      [32, 0x14, 6], [48, 0x0, 5], [58, 0x5c, 7], [60, 0x7ffc, 15], [88, 0xfc, 8], [92, 0x7fff0, 19], [122, 0x7b, 7],
      [127, 0xffffffc, 28], [128, 0xfffe6, 20], [142, 0xffffeb, 24], [199, 0x1ffffec, 25], [203, 0x7ffffde, 27],
      [220, 0xffffffd, 28], [249, 0xffffffe, 28], [254, 0x7fffff0, 27], [255, 0x3ffffee, 26], [256, 0x3fffffff, 30],
    ];
    for (const [symbol, code, length] of listed) expect([symbol, huffmanCode(symbol)]).toEqual([symbol, { code, length }]);
  });

  it('decodes the strings of RFC 7541 Appendix C.4 and every byte value', () => {
    expect(huffmanDecode(hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff'), 0, 12)).toBe('www.example.com');
    expect(huffmanDecode(hex('a8eb 1064 9cbf'), 0, 6)).toBe('no-cache');
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('latin1');
    const encoded = huffmanEncode(all);
    expect(huffmanDecode(encoded, 0, encoded.length)).toBe(all);
  });

  it('refuses EOS inside a string and padding that is not the EOS code or too long', () => {
    // EOS (30 ones) then padding.
    expect(() => huffmanDecode(hex('ffffffff'), 0, 4)).toThrow(/EOS/);
    // 'a' (00011) padded with zeros.
    expect(() => huffmanDecode(hex('18'), 0, 1)).toThrow(/padding/);
    // 'a' then a whole octet of ones: padding of 11 bits.
    expect(() => huffmanDecode(hex('1fff'), 0, 2)).toThrow(/padding/);
  });
});

describe('HPACK decoder', () => {
  it('decodes RFC 7541 C.3 and C.4: requests with and without Huffman, sharing a dynamic table', () => {
    for (const blocks of [
      ['8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d', '8286 84be 5808 6e6f 2d63 6163 6865', '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65'],
      ['8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff', '8286 84be 5886 a8eb 1064 9cbf', '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'],
    ]) {
      const decoder = new HpackDecoder();
      const base: HeaderField[] = [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']];
      expect(decoder.decode(hex(blocks[0]!))).toEqual(base);
      expect(decoder.decode(hex(blocks[1]!))).toEqual([...base, ['cache-control', 'no-cache']]);
      expect(decoder.decode(hex(blocks[2]!))).toEqual([[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'], ['custom-key', 'custom-value']]);
    }
  });

  it('refuses an index past the tables, a size update inside a block or above 4,096, and a truncated block', () => {
    expect(() => new HpackDecoder().decode(hex('be'))).toThrow(/no header field at index 62/);
    expect(() => new HpackDecoder().decode(hex('80'))).toThrow(/index 0/);
    expect(() => new HpackDecoder().decode(hex('82 3f e1 1f'))).toThrow(/size update/);
    expect(() => new HpackDecoder().decode(hex('3f e2 1f'))).toThrow(/size update/);
    expect(() => new HpackDecoder().decode(hex('40 0a 63 75'))).toThrow(/truncated/);
    expect(() => new HpackDecoder().decode(hex('ff ff ff ff ff ff'))).toThrow(/integer/);
  });

  it('evicts the oldest entries past the table size and honours a size update to 0', () => {
    const decoder = new HpackDecoder();
    const encoder = new HpackEncoder();
    // 40 fields of 32 + 10 + 100 octets: more than 4,096 in all, so the first ones are evicted.
    const fields = Array.from({ length: 40 }, (_, i): HeaderField => [`x-field-${String(i).padStart(2, '0')}`, 'v'.repeat(100)]);
    expect(decoder.decode(encoder.encode(fields))).toEqual(fields);
    // Repeated: the newest are sent as indexes, the evicted ones as literals again.
    expect(decoder.decode(encoder.encode(fields))).toEqual(fields);
    expect(decoder.decode(hex('20 82'))).toEqual([[':method', 'GET']]);
    expect(() => decoder.decode(hex('be'))).toThrow(/index 62/);
  });
});

describe('HPACK encoder', () => {
  it('sends a repeated field as one index octet, never indexes grpc-timeout, and shrinks the table when told', () => {
    const encoder = new HpackEncoder();
    const decoder = new HpackDecoder();
    const call = (timeout: string): HeaderField[] => [[':method', 'POST'], [':path', '/etcdserverpb.KV/Range'], ['content-type', 'application/grpc'], ['te', 'trailers'], ['grpc-timeout', timeout]];
    const first = encoder.encode(call('999m'));
    expect(decoder.decode(first)).toEqual(call('999m'));
    const second = encoder.encode(call('998m'));
    expect(decoder.decode(second)).toEqual(call('998m'));
    // :method POST from the static table, then :path, content-type and te from the dynamic one (newest
    // first: te 62, content-type 63, :path 64), then grpc-timeout as a literal not indexed (0x00).
    expect([...second.subarray(0, 5)]).toEqual([0x83, 0xc0, 0xbf, 0xbe, 0x00]);
    expect(second.length).toBeLessThan(first.length / 3);
    encoder.setMaxSize(0);
    const third = encoder.encode(call('997m'));
    expect(third[0]).toBe(0x20);
    expect(decoder.decode(third)).toEqual(call('997m'));
  });

  it("reuses a constant field list's encoding only while the table is as it was: other fields inserted or a resize move its indexes", () => {
    const encoder = new HpackEncoder();
    const decoder = new HpackDecoder();
    const fields = (path: string): HeaderField[] => [[':method', 'POST'], [':path', path], ['content-type', 'application/grpc'], ['te', 'trailers']];
    const range = fields('/etcdserverpb.KV/Range');
    const txn = fields('/etcdserverpb.KV/Txn');
    const roundTrip = (constant: HeaderField[], timeout: string): Buffer => {
      const block = encoder.encode(constant, [['grpc-timeout', timeout]]);
      expect(decoder.decode(block)).toEqual([...constant, ['grpc-timeout', timeout]]);
      return block;
    };
    roundTrip(range, '1m');
    const indexed = roundTrip(range, '2m');
    expect(roundTrip(range, '3m')).toEqual(Buffer.concat([indexed.subarray(0, 4), encoder.encode([], [['grpc-timeout', '3m']])]));
    // Txn's path goes into the table and every older entry's index moves up by one.
    roundTrip(txn, '4m');
    const moved = roundTrip(range, '5m');
    expect(moved.subarray(0, 4).equals(indexed.subarray(0, 4))).toBe(false);
    roundTrip(txn, '6m');
    encoder.setMaxSize(0);
    const resized = roundTrip(range, '7m');
    expect(resized[0]).toBe(0x20);
    roundTrip(range, '8m');
    roundTrip(txn, '9m');
  });
});
