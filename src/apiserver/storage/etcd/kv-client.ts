/**
 * etcd's KV and Lease calls through grpc-js, with the fault handling the etcd3 package's client gave
 * them, without its per-call layers (host shuffle, auth metadata, policy wrappers and a stack trace
 * captured per call: about 5% of an API server's time on etcd).
 *
 * - Each call starts on a random member and goes to the next one only when a member's circuit breaker
 *   refuses it (3 consecutive failures open it for 5 s, then one call tries again), so a call is sent
 *   once at most: a transaction that failed on a lost connection may still have been applied, and the
 *   caller decides (etcd-client.ts: reads are retried once, writes never).
 * - Errors arrive as etcd3's typed errors (castGrpcError), which etcd-client.ts maps to StoreErrors; a
 *   member's channel is dropped after a connection-level failure, so the next call connects afresh.
 * - Every call carries a deadline (the store's request timeout unless the caller gives one).
 */
import * as grpc from '@grpc/grpc-js';
import { type CircuitBreakerPolicy, circuitBreaker, ConsecutiveBreaker, handleWhen, isBrokenCircuitError } from 'cockatiel';
import {
  castGrpcError,
  isRecoverableError,
  type ICompactionRequest,
  type ILeaseGrantRequest,
  type ILeaseGrantResponse,
  type IRangeRequest,
  type IRangeResponse,
  type ITxnRequest,
  type ITxnResponse,
} from 'etcd3';
import { CHANNEL_OPTIONS, channelCredentials, etcdService } from './members.js';
import type { EtcdClientOptions } from './etcd-client.js';

type Callback<T> = (err: grpc.ServiceError | null, res?: T) => void;
type Unary<Req, Res> = (req: Req, metadata: grpc.Metadata, options: grpc.CallOptions, callback: Callback<Res>) => grpc.ClientUnaryCall;

interface KvService extends grpc.Client {
  range: Unary<IRangeRequest, IRangeResponse>;
  txn: Unary<ITxnRequest, ITxnResponse>;
  compact: Unary<ICompactionRequest, object>;
}

interface LeaseService extends grpc.Client {
  leaseGrant: Unary<ILeaseGrantRequest, ILeaseGrantResponse>;
}

interface Member {
  host: string;
  credentials: grpc.ChannelCredentials;
  breaker: CircuitBreakerPolicy;
  kv?: KvService;
  lease?: LeaseService;
}

const NO_METADATA = new grpc.Metadata();

export class EtcdKv {
  private readonly members: Member[];
  private readonly timeoutMs: number;
  private closed = false;

  constructor(opts: EtcdClientOptions) {
    if (opts.endpoints.length === 0) throw new Error('no etcd endpoints');
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.members = opts.endpoints.map((endpoint) => {
      const url = new URL(endpoint);
      return {
        host: url.host,
        credentials: channelCredentials(url, opts.tls),
        breaker: circuitBreaker(handleWhen(isRecoverableError), { halfOpenAfter: 5000, breaker: new ConsecutiveBreaker(3) }),
      };
    });
  }

  range(req: IRangeRequest, options?: grpc.CallOptions): Promise<IRangeResponse> {
    return this.call((m) => this.kvOf(m), (kv, o, cb) => kv.range(req, NO_METADATA, o, cb), options);
  }

  txn(req: ITxnRequest): Promise<ITxnResponse> {
    return this.call((m) => this.kvOf(m), (kv, o, cb) => kv.txn(req, NO_METADATA, o, cb));
  }

  async compact(req: ICompactionRequest): Promise<void> {
    await this.call((m) => this.kvOf(m), (kv, o, cb) => kv.compact(req, NO_METADATA, o, cb));
  }

  leaseGrant(req: ILeaseGrantRequest): Promise<ILeaseGrantResponse> {
    return this.call((m) => this.leaseOf(m), (lease, o, cb) => lease.leaseGrant(req, NO_METADATA, o, cb));
  }

  close(): void {
    this.closed = true;
    for (const m of this.members) this.reset(m);
  }

  /** Runs `invoke` on the first member (from a random one) whose breaker lets it through. */
  private async call<S, T>(client: (m: Member) => S, invoke: (service: S, options: grpc.CallOptions, cb: Callback<T>) => void, options?: grpc.CallOptions): Promise<T> {
    const start = Math.floor(Math.random() * this.members.length);
    let refused: unknown;
    for (let i = 0; i < this.members.length; i++) {
      const member = this.members[(start + i) % this.members.length]!;
      try {
        return await member.breaker.execute(() => this.once(member, client, invoke, options));
      } catch (err) {
        if (!isBrokenCircuitError(err)) throw err;
        refused = err;
      }
    }
    throw refused;
  }

  private once<S, T>(member: Member, client: (m: Member) => S, invoke: (service: S, options: grpc.CallOptions, cb: Callback<T>) => void, options?: grpc.CallOptions): Promise<T> {
    if (this.closed) return Promise.reject(new Error('etcd client is closed'));
    const service = client(member);
    return new Promise<T>((resolve, reject) => {
      const callback: Callback<T> = (err, res) => {
        if (!err) return resolve(res as T);
        const typed = castGrpcError(err);
        if (isRecoverableError(typed)) this.reset(member);
        reject(typed);
      };
      // grpc-js captures a stack trace for each call's eventual error: the call site is known here.
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      try {
        invoke(service, options ?? { deadline: Date.now() + this.timeoutMs }, callback);
      } finally {
        Error.stackTraceLimit = limit;
      }
    });
  }

  private kvOf(m: Member): KvService {
    m.kv ??= serviceClient<KvService>('KV', m);
    return m.kv;
  }

  private leaseOf(m: Member): LeaseService {
    m.lease ??= serviceClient<LeaseService>('Lease', m);
    return m.lease;
  }

  /** Drops the member's channels (after a connection-level failure, or on close). */
  private reset(m: Member): void {
    for (const service of [m.kv, m.lease]) if (service) closeClient(service);
    m.kv = undefined;
    m.lease = undefined;
  }
}

/** A client of one of etcd's services on the member's own channel (dropped apart from the watch stream's). */
function serviceClient<T extends grpc.Client>(name: 'KV' | 'Lease', m: Member): T {
  const client: grpc.Client = new (etcdService(name))(m.host, m.credentials, CHANNEL_OPTIONS);
  return client as T;
}

/** Closes a client; one still connecting is closed once that settles (grpc-node issue 1487, as etcd3 does). */
function closeClient(client: grpc.Client): void {
  if (client.getChannel().getConnectivityState(false) === grpc.connectivityState.CONNECTING) {
    client.waitForReady(Date.now() + 1000, () => setImmediate(() => client.close()));
  } else {
    client.close();
  }
}
