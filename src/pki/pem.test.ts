import { PkiError } from './errors.js';
import { decodePemBlocks, encodePem } from './pem.js';

const der = new Uint8Array(Array.from({ length: 100 }, (_, i) => (i * 37) & 0xff));

describe('encodePem / decodePemBlocks', () => {
  it('round-trips with 64-column lines', () => {
    const pem = encodePem('CERTIFICATE', der);
    const lines = pem.trimEnd().split('\n');
    expect(lines[0]).toBe('-----BEGIN CERTIFICATE-----');
    expect(lines.at(-1)).toBe('-----END CERTIFICATE-----');
    expect(lines.slice(1, -1).every((l) => l.length <= 64)).toBe(true);
    const [block] = decodePemBlocks(pem);
    expect(block?.type).toBe('CERTIFICATE');
    expect(block?.headers).toEqual({});
    expect(Buffer.from(block!.der).equals(Buffer.from(der))).toBe(true);
  });

  it('allows text before, between and after blocks, and CRLF line ends', () => {
    const text = `subject=foo\n${encodePem('A', der)}between\r\n${encodePem('B', der.subarray(1)).replace(/\n/g, '\r\n')}trailer`;
    const blocks = decodePemBlocks(text);
    expect(blocks.map((b) => b.type)).toEqual(['A', 'B']);
    expect(blocks[1]?.der.length).toBe(99);
  });

  it('returns no blocks for text without PEM', () => {
    expect(decodePemBlocks('hello world')).toEqual([]);
    expect(decodePemBlocks('')).toEqual([]);
  });

  it('reads headers', () => {
    const pem = encodePem('RSA PRIVATE KEY', der).replace('-----\n', '-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n');
    expect(decodePemBlocks(pem)[0]?.headers).toEqual({ 'Proc-Type': '4,ENCRYPTED', 'DEK-Info': 'AES-128-CBC,00' });
  });

  // Canonical base64 takes a shortcut; everything else the full check, with the same outcome as before.
  it('reads non-canonical but valid base64: blanks inside lines, non-zero trailing bits', () => {
    const block = (body: string): number[] => [...(decodePemBlocks(`-----BEGIN X-----\n${body}\n-----END X-----\n`)[0]?.der ?? [])];
    expect(block('AQID BA==')).toEqual([1, 2, 3, 4]);
    expect(block('AQ\tID\nBA== ')).toEqual([1, 2, 3, 4]);
    expect(block('AR==')).toEqual([1]);
    expect(block('')).toEqual([]);
  });

  it.each([
    ['no END line', '-----BEGIN CERTIFICATE-----\nAAAA\n'],
    ['mismatched END type', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END PRIVATE KEY-----\n'],
    ['invalid base64 characters', '-----BEGIN CERTIFICATE-----\nAA*A\n-----END CERTIFICATE-----\n'],
    ['truncated base64', '-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\n'],
    ['padding inside the text', '-----BEGIN CERTIFICATE-----\nAA==AA==\n-----END CERTIFICATE-----\n'],
    ['too much padding', '-----BEGIN CERTIFICATE-----\nA===\n-----END CERTIFICATE-----\n'],
  ])('rejects a malformed block: %s', (_name, text) => {
    expect(() => decodePemBlocks(text)).toThrow(PkiError);
  });
});
