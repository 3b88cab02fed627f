import { jest } from '@jest/globals';
import { GrpcMessages } from './watch-transport.js';

/** gRPC's framing of `message`: uncompressed flag, 4-byte big-endian length, the bytes. */
function frame(message: Buffer, flag = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flag;
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

describe('GrpcMessages', () => {
  const messages = [Buffer.from('first'), Buffer.alloc(0), Buffer.alloc(70_000, 7), Buffer.from('last')];
  const wire = Buffer.concat(messages.map((m) => frame(m)));

  it('returns every message whole and in order however the bytes are split into chunks', () => {
    for (const size of [1, 2, 3, 4, 5, 6, 7, 16_384, wire.length]) {
      const reader = new GrpcMessages();
      const out: Buffer[] = [];
      for (let i = 0; i < wire.length; i += size) out.push(...reader.push(wire.subarray(i, i + size)));
      expect(out.map((m) => m.toString('hex'))).toEqual(messages.map((m) => m.toString('hex')));
    }
  });

  it('joins a message that spans many chunks once, when its last chunk arrives', () => {
    const big = frame(Buffer.alloc(1 << 20, 1));
    const reader = new GrpcMessages();
    const concat = jest.spyOn(Buffer, 'concat');
    try {
      const out: Buffer[] = [];
      for (let i = 0; i < big.length; i += 16_384) out.push(...reader.push(big.subarray(i, i + 16_384)));
      expect(out.map((m) => m.length)).toEqual([1 << 20]);
      expect(concat).toHaveBeenCalledTimes(1);
    } finally {
      concat.mockRestore();
    }
  });

  it('refuses a compressed message', () => {
    expect(() => new GrpcMessages().push(frame(Buffer.from('x'), 1))).toThrow(/compressed/);
  });
});
