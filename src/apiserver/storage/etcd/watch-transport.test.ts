import { jest } from '@jest/globals';
import { ProtoWriter } from './proto-wire.js';
import { H2Error } from './h2-frames.js';
import type { WatchResponse } from './watch-proto.js';
import { GrpcMessages, H2WatchCall } from './watch-transport.js';

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

describe('H2WatchCall', () => {
  /** A WatchResponse for a created watch, framed. */
  const created = (id: number): Buffer => {
    const w = new ProtoWriter();
    w.varint(2, id);
    w.varint(3, 1);
    return Buffer.from(w.frame());
  };

  it('resets the stream at a response it cannot decode and reads nothing after it', () => {
    const cancelled: number[] = [];
    const call = new H2WatchCall();
    call.attach({ write: () => {}, cancel: (code?: number) => void cancelled.push(code ?? -1) });
    const ids: string[] = [];
    const errors: string[] = [];
    call.on('data', (res: WatchResponse) => ids.push(res.watch_id));
    call.on('error', (err: Error) => errors.push(err.message));

    call.onHeaders([[':status', '200'], ['content-type', 'application/grpc']]);
    call.onData(created(5));
    // A length-delimited field that claims 16 bytes and has none.
    call.onData(Buffer.concat([frame(Buffer.from([0x0a, 0x10])), created(6)]));
    call.onData(created(7));
    call.onClose({ rstCode: H2Error.INTERNAL_ERROR, unsent: false });
    expect(ids).toEqual(['5']);
    expect(cancelled).toEqual([H2Error.INTERNAL_ERROR]);
    expect(errors).toEqual([expect.stringMatching(/truncated protobuf field/)]);
  });

  it("ends with 'end' on grpc-status 0 and with the member's status as an etcd3 error otherwise", () => {
    const outcomes = [
      [[['grpc-status', '0']], 'end'],
      [[['grpc-status', '14'], ['grpc-message', 'etcdserver%3A%20no%20leader']], 'error: 14 UNAVAILABLE: etcdserver: no leader'],
      [[], 'error: 14 UNAVAILABLE: Watch stream closed: connection reset'],
    ] as const;
    for (const [trailers, outcome] of outcomes) {
      const call = new H2WatchCall();
      const seen: string[] = [];
      call.on('end', () => seen.push('end'));
      call.on('error', (err: Error) => seen.push(`error: ${err.message}`));
      call.onHeaders([[':status', '200']]);
      if (trailers.length > 0) call.onHeaders(trailers.map(([n, v]) => [n, v]));
      call.onClose(trailers.length > 0 ? { unsent: false } : { error: new Error('connection reset'), unsent: false });
      expect(seen).toEqual([outcome]);
    }
  });
});
