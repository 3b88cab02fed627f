import { DecodedBodies } from './decoded-bodies.js';
import type { DecodedBody } from './negotiation.js';

describe('DecodedBodies', () => {
  /** A decode that counts its calls and parses the bytes as JSON. */
  function counting(): { calls: number; decode: (bytes: Buffer) => () => DecodedBody } {
    const c = {
      calls: 0,
      decode: (bytes: Buffer) => (): DecodedBody => {
        c.calls++;
        return { object: JSON.parse(bytes.toString()) as DecodedBody['object'], duplicateFields: [], unknownFields: ['spec.x'] };
      },
    };
    return c;
  }
  const body = (token: string): Buffer => Buffer.from(JSON.stringify({ kind: 'TokenReview', spec: { token } }));

  it('decodes bytes seen before once, and hands every caller the same frozen result', () => {
    const memo = new DecodedBodies(8, 4096);
    const c = counting();
    const first = memo.decode(body('a'), 'application/json', true, c.decode(body('a')));
    const again = memo.decode(body('a'), 'application/json', true, c.decode(body('a')));
    expect(again).toBe(first);
    expect(c.calls).toBe(1);
    expect(Object.isFrozen(first.object.spec)).toBe(true);
    expect(Object.isFrozen(first.unknownFields)).toBe(true);
    // Another Content-Type, or unknown fields not reported, is another decode.
    memo.decode(body('a'), 'application/yaml', true, c.decode(body('a')));
    memo.decode(body('a'), 'application/json', false, c.decode(body('a')));
    expect(c.calls).toBe(3);
  });

  it('never answers a body with another one that shares its end', () => {
    const memo = new DecodedBodies(8, 4096);
    const c = counting();
    const tail = 'x'.repeat(64);
    const one = Buffer.from(`{"spec":{"token":"1${tail}"}}`);
    const two = Buffer.from(`{"spec":{"token":"2${tail}"}}`);
    expect(memo.decode(one, undefined, false, c.decode(one)).object.spec).toEqual({ token: `1${tail}` });
    expect(memo.decode(two, undefined, false, c.decode(two)).object.spec).toEqual({ token: `2${tail}` });
    expect(memo.decode(one, undefined, false, c.decode(one)).object.spec).toEqual({ token: `1${tail}` });
    expect(c.calls).toBe(3);
  });

  it('remembers no failed decode, keeps its own copy of the bytes, and stays bounded', () => {
    const memo = new DecodedBodies(4, 4096);
    const fail = (): DecodedBody => {
      throw new Error('bad body');
    };
    expect(() => memo.decode(Buffer.from('{'), undefined, false, fail)).toThrow('bad body');
    expect(() => memo.decode(Buffer.from('{'), undefined, false, fail)).toThrow('bad body');
    expect(memo.size).toBe(0);
    // The request's buffer changing afterwards changes nothing remembered.
    const c = counting();
    const bytes = body('mutable');
    const decoded = memo.decode(bytes, undefined, false, c.decode(bytes));
    bytes.fill(0x20, 0, 10);
    expect(memo.decode(body('mutable'), undefined, false, c.decode(body('mutable')))).toBe(decoded);
    expect(c.calls).toBe(1);
    for (let i = 0; i < 10; i++) memo.decode(body(`t${i}`), undefined, false, c.decode(body(`t${i}`)));
    expect(memo.size).toBe(4);
  });

  it('keeps no body larger than its limit: each is decoded afresh and nothing is held', () => {
    const memo = new DecodedBodies(8, 64);
    const c = counting();
    const large = body('y'.repeat(100));
    const first = memo.decode(large, undefined, false, c.decode(large));
    expect(memo.decode(large, undefined, false, c.decode(large))).not.toBe(first);
    expect([c.calls, memo.size]).toEqual([2, 0]);
  });
});
