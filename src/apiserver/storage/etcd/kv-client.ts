/**
 * etcd's KV and Lease calls, as unary gRPC on the client's own HTTP/2 (grpc-unary.ts) with messages encoded
 * and decoded by hand (etcd-proto.ts), keeping the fault handling the etcd3 package's client gave:
 *
 * - Each call starts on a random member and goes to the next one only when a member's circuit breaker
 *   refuses it (3 consecutive failures open it for 5 s, then one call tries again), so a write is
 *   sent once at most: a transaction that failed on a lost connection may still have been applied,
 *   and the caller decides (etcd-client.ts: 504 when it may have been, 503 when it cannot).
 * - A read that failed on its member's connection is tried once more on the next member.
 * - Errors arrive as etcd3's typed errors, which etcd-client.ts maps to StoreErrors; a member's
 *   connection is dropped after a connection-level failure, so the next call connects afresh.
 * - Every call carries a deadline (the store's request timeout unless the caller gives one).
 */
import { isBrokenCircuitError } from 'cockatiel';
import { isRecoverableError } from 'etcd3';
import { CircuitBreaker } from './circuit-breaker.js';
import {
  decodeLeaseGrant,
  decodeRange,
  decodeTxn,
  encodeCompaction,
  encodeLeaseGrant,
  encodeRange,
  encodeTxn,
  type LeaseGrantResponse,
  type RangeRequest,
  type RangeResponse,
  type TxnRequest,
  type TxnResponse,
} from './etcd-proto.js';
import type { ProtoWriter } from './proto-wire.js';
import { MemberConnection } from './grpc-unary.js';
import type { EtcdClientOptions } from './etcd-client.js';

interface Member {
  connection: MemberConnection;
  breaker: CircuitBreaker;
}

export interface CallOptions {
  /** When the call fails with DEADLINE_EXCEEDED (ms since the epoch). */
  deadline?: number;
}

const RANGE = '/etcdserverpb.KV/Range';
const TXN = '/etcdserverpb.KV/Txn';
const COMPACT = '/etcdserverpb.KV/Compact';
const LEASE_GRANT = '/etcdserverpb.Lease/LeaseGrant';

export class EtcdKv {
  private readonly members: Member[];
  private readonly timeoutMs: number;

  constructor(opts: EtcdClientOptions) {
    if (opts.endpoints.length === 0) throw new Error('no etcd endpoints');
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.members = opts.endpoints.map((endpoint) => ({
      connection: new MemberConnection(new URL(endpoint), opts.tls),
      breaker: new CircuitBreaker((err) => err instanceof Error && isRecoverableError(err), 3, 5000),
    }));
  }

  range(req: RangeRequest, options?: CallOptions): Promise<RangeResponse> {
    return this.call(RANGE, encodeRange(req), decodeRange, options, true);
  }

  txn(req: TxnRequest): Promise<TxnResponse> {
    return this.call(TXN, encodeTxn(req), decodeTxn);
  }

  async compact(req: { revision: number }): Promise<void> {
    await this.call(COMPACT, encodeCompaction(req.revision), () => undefined);
  }

  leaseGrant(req: { TTL: number }): Promise<LeaseGrantResponse> {
    return this.call(LEASE_GRANT, encodeLeaseGrant(req.TTL), decodeLeaseGrant);
  }

  close(): void {
    for (const m of this.members) m.connection.close();
  }

  /**
   * Sends the request to the first member (from a random one) whose breaker lets it through; a read
   * that failed on a connection goes once more to the member after the one that failed. A member's
   * connection is dropped after a connection-level failure, so the next call connects afresh.
   */
  private async call<T>(path: string, req: ProtoWriter, decode: (reply: Buffer) => T, options?: CallOptions, read = false): Promise<T> {
    const frame = req.frame();
    const deadline = options?.deadline ?? Date.now() + this.timeoutMs;
    const start = this.members.length === 1 ? 0 : Math.floor(Math.random() * this.members.length);
    let refused: unknown;
    let retry = read;
    for (let i = 0; i < this.members.length + (read ? 1 : 0); i++) {
      const member = this.members[(start + i) % this.members.length]!;
      try {
        return decode(await member.breaker.run(() => member.connection.call(path, frame, deadline)));
      } catch (err) {
        if (isBrokenCircuitError(err)) {
          refused = err;
          continue;
        }
        const recoverable = isRecoverableError(err as Error);
        if (recoverable) member.connection.reset();
        if (retry && recoverable && Date.now() < deadline) retry = false;
        else throw err;
      }
    }
    throw refused;
  }
}
