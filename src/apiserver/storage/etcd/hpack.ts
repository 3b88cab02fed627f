/**
 * HPACK (RFC 7541) for the etcd client's HTTP/2 connections.
 * - Decoding is complete: indexed fields, literals with and without indexing (never-indexed too),
 *   table size updates, Huffman strings, and a dynamic table evicting by the spec's size
 *   (name + value + 32 octets) within the 4,096 octets this client allows (SETTINGS_HEADER_TABLE_SIZE).
 * - Encoding sends each request's fields as literals. Those that repeat call after call (method,
 *   path, content type, authority...) are added to the peer's table once and then sent as a
 *   one-octet index, and a method's constant fields, once they are all indexes, keep their encoded
 *   octets until the table changes; grpc-timeout, different on almost every call, is never indexed.
 */
import { huffmanDecode } from './hpack-huffman.js';

export type HeaderField = [name: string, value: string];

/** RFC 7541 Appendix A. */
// prettier-ignore
const STATIC: readonly HeaderField[] = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'], [':scheme', 'http'],
  [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'], [':status', '304'], [':status', '400'],
  [':status', '404'], [':status', '500'], ['accept-charset', ''], ['accept-encoding', 'gzip, deflate'], ['accept-language', ''],
  ['accept-ranges', ''], ['accept', ''], ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''],
  ['cache-control', ''], ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''], ['etag', ''], ['expect', ''],
  ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''], ['if-modified-since', ''], ['if-none-match', ''], ['if-range', ''],
  ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''], ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''],
  ['proxy-authorization', ''], ['range', ''], ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''], ['set-cookie', ''],
  ['strict-transport-security', ''], ['transfer-encoding', ''], ['user-agent', ''], ['vary', ''], ['via', ''], ['www-authenticate', ''],
];

/** The dynamic table size this client's decoder allows (the protocol's default). */
export const HEADER_TABLE_SIZE = 4096;

const entrySize = (f: HeaderField): number => f[0].length + f[1].length + 32;

/** A dynamic table: newest first, evicting the oldest past `max` octets. */
class DynamicTable {
  readonly entries: HeaderField[] = [];
  private size = 0;

  constructor(public max: number) {}

  add(field: HeaderField): void {
    this.size += entrySize(field);
    this.entries.unshift(field);
    this.evict();
  }

  resize(max: number): void {
    this.max = max;
    this.evict();
  }

  private evict(): void {
    while (this.size > this.max) this.size -= entrySize(this.entries.pop()!);
  }
}

export class HpackDecoder {
  private readonly table = new DynamicTable(HEADER_TABLE_SIZE);
  private pos = 0;
  private block: Buffer = Buffer.alloc(0);

  /** The fields of one header block; throws (a COMPRESSION_ERROR for the connection) when it is malformed. */
  decode(block: Buffer): HeaderField[] {
    this.block = block;
    this.pos = 0;
    const fields: HeaderField[] = [];
    let first = true;
    while (this.pos < block.length) {
      const byte = block[this.pos]!;
      if (byte & 0x80) {
        fields.push(this.field(this.integer(7)));
      } else if (byte & 0x40) {
        const field = this.literal(6);
        this.table.add(field);
        fields.push(field);
      } else if (byte & 0x20) {
        // A size update may only open a block (§4.2), and never exceed what we allowed.
        const max = this.integer(5);
        if (!first || max > HEADER_TABLE_SIZE) throw new Error('HPACK: invalid dynamic table size update');
        this.table.resize(max);
        continue;
      } else {
        fields.push(this.literal(4));
      }
      first = false;
    }
    return fields;
  }

  private field(index: number): HeaderField {
    const field = index === 0 ? undefined : index <= STATIC.length ? STATIC[index - 1] : this.table.entries[index - STATIC.length - 1];
    if (!field) throw new Error(`HPACK: no header field at index ${index}`);
    return field;
  }

  private literal(prefix: number): HeaderField {
    const index = this.integer(prefix);
    const name = index === 0 ? this.string() : this.field(index)[0];
    return [name, this.string()];
  }

  private string(): string {
    if (this.pos >= this.block.length) throw new Error('HPACK: truncated header block');
    const huffman = (this.block[this.pos]! & 0x80) !== 0;
    const length = this.integer(7);
    const end = this.pos + length;
    if (end > this.block.length) throw new Error('HPACK: truncated header block');
    const text = huffman ? huffmanDecode(this.block, this.pos, end) : this.block.toString('latin1', this.pos, end);
    this.pos = end;
    return text;
  }

  /** An integer with an N-bit prefix (§5.1), starting at the current octet. */
  private integer(prefix: number): number {
    const mask = (1 << prefix) - 1;
    let value = this.block[this.pos++]! & mask;
    if (value < mask) return value;
    for (let shift = 0; ; shift += 7) {
      if (this.pos >= this.block.length || shift > 21) throw new Error('HPACK: invalid integer');
      const byte = this.block[this.pos++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
  }
}

/** The request fields worth indexing: the same on every call of a connection. */
const UNINDEXED = new Set(['grpc-timeout']);
const STATIC_FIELDS = new Map<string, number>();
const STATIC_NAMES = new Map<string, number>();
STATIC.forEach(([name, value], i) => {
  STATIC_FIELDS.set(`${name}\0${value}`, i + 1);
  if (!STATIC_NAMES.has(name)) STATIC_NAMES.set(name, i + 1);
});

export class HpackEncoder {
  private readonly table = new DynamicTable(HEADER_TABLE_SIZE);
  /** Each field the table holds (and names), by the count of insertions when it went in: its index follows from that. */
  private readonly inserted = new Map<string, number>();
  private insertions = 0;
  private pendingSize: number | undefined;
  /** Changes with every insertion and resize: a list of fields encodes the same way while it stays. */
  private version = 0;
  /** The last encoding of a request's constant fields, valid while `version` is the one it was made at. */
  private readonly memo = new WeakMap<readonly HeaderField[], { version: number; bytes: Buffer }>();
  private out = Buffer.allocUnsafe(256);
  private pos = 0;

  /** The peer's SETTINGS_HEADER_TABLE_SIZE: a smaller table is announced at the start of the next block. */
  setMaxSize(max: number): void {
    if (max >= this.table.max) return;
    this.table.resize(max);
    this.pendingSize = max;
    this.version++;
  }

  /**
   * The header block of `fields` then `extra`. A caller that sends the same `fields` array call after
   * call (a method's constant fields) gets its encoding again without a walk, once it only names
   * table entries: the table did not change since, so neither did the encoding.
   */
  encode(fields: readonly HeaderField[], extra: readonly HeaderField[] = []): Buffer {
    this.pos = 0;
    if (this.pendingSize !== undefined) {
      this.integer(this.pendingSize, 5, 0x20);
      this.pendingSize = undefined;
    }
    const memo = this.memo.get(fields);
    if (memo?.version === this.version) this.append(memo.bytes);
    else {
      const start = this.pos;
      const before = this.version;
      for (const field of fields) this.field(field);
      if (this.version === before) this.memo.set(fields, { version: before, bytes: Buffer.from(this.out.subarray(start, this.pos)) });
    }
    for (const field of extra) this.field(field);
    return Buffer.from(this.out.subarray(0, this.pos));
  }

  private field(field: HeaderField): void {
    const [name, value] = field;
    const key = `${name}\0${value}`;
    const exact = STATIC_FIELDS.get(key) ?? this.dynamicIndex(key);
    if (exact > 0) {
      this.integer(exact, 7, 0x80);
      return;
    }
    const nameIndex = STATIC_NAMES.get(name) ?? this.dynamicIndex(name);
    const indexing = !UNINDEXED.has(name) && entrySize(field) <= this.table.max;
    // Literal with incremental indexing (01) or without indexing (0000), raw strings.
    this.integer(nameIndex, indexing ? 6 : 4, indexing ? 0x40 : 0);
    if (nameIndex === 0) this.text(name);
    this.text(value);
    if (indexing) {
      this.table.add(field);
      this.insertions++;
      this.version++;
      this.inserted.set(key, this.insertions);
      this.inserted.set(name, this.insertions);
    }
  }

  /** The dynamic table index of a field (or name) inserted earlier and not evicted since; 0 if none. */
  private dynamicIndex(key: string): number {
    const at = this.inserted.get(key);
    if (at === undefined) return 0;
    const age = this.insertions - at;
    return age < this.table.entries.length ? STATIC.length + age + 1 : 0;
  }

  private integer(value: number, prefix: number, flags: number): void {
    this.reserve(6);
    const mask = (1 << prefix) - 1;
    if (value < mask) {
      this.out[this.pos++] = flags | value;
      return;
    }
    this.out[this.pos++] = flags | mask;
    let rest = value - mask;
    while (rest >= 0x80) {
      this.reserve(1);
      this.out[this.pos++] = (rest & 0x7f) | 0x80;
      rest = Math.floor(rest / 128);
    }
    this.reserve(1);
    this.out[this.pos++] = rest;
  }

  /** A raw (not Huffman-coded) string literal; header fields here are ASCII. */
  private text(s: string): void {
    this.integer(s.length, 7, 0);
    this.reserve(s.length);
    this.pos += this.out.write(s, this.pos, 'latin1');
  }

  private append(bytes: Buffer): void {
    this.reserve(bytes.length);
    this.out.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.pos + n));
    this.out.copy(grown, 0, 0, this.pos);
    this.out = grown;
  }
}
