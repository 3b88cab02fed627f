/**
 * The gRPC side of the watch: a Watch RPC (etcd's `etcdserverpb.Watch/Watch`, from the protocol
 * definitions the etcd3 package ships) opened on one member at a time, moving to the next member
 * each time the caller asks for another stream. The RPC carries `hasleader: true`, as etcd's Go
 * client does for kube-apiserver's watches (WithRequireLeader): a member that loses its leader ends
 * the stream instead of leaving it silent, so the watch moves to a member that has one.
 */
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { IWatchRequest, IWatchResponse } from 'etcd3';
import type { EtcdClientOptions } from './etcd-client.js';

/** One Watch RPC, as the multiplexer uses it (grpc-js's duplex call, or a test's stand-in). */
export interface WatchCall {
  write(req: IWatchRequest): void;
  /** Ends the call (grpc-js then reports a CANCELLED error, which the caller ignores). */
  cancel(): void;
  on(event: 'data', listener: (res: IWatchResponse) => void): void;
  on(event: 'error', listener: (err: Error) => void): void;
  on(event: 'end', listener: () => void): void;
}

export interface WatchTransport {
  /** Opens a Watch RPC on the member after the one the previous call used. */
  open(): { call: WatchCall; endpoint: string };
  close(): void;
}

type WatchClient = grpc.Client & { watch(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<IWatchRequest, IWatchResponse> };

let watchService: grpc.ServiceClientConstructor | undefined;

/** etcd's Watch service from the etcd3 package's copy of etcd's rpc.proto, decoded as etcd3 decodes it. */
function service(): grpc.ServiceClientConstructor {
  if (!watchService) {
    const proto = createRequire(import.meta.url).resolve('etcd3/proto/rpc.proto');
    const def = loadSync(proto, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    const pkg = grpc.loadPackageDefinition(def)['etcdserverpb'] as grpc.GrpcObject;
    watchService = pkg['Watch'] as grpc.ServiceClientConstructor;
  }
  return watchService;
}

export function grpcWatchTransport(opts: EtcdClientOptions): WatchTransport {
  const clients = new Map<string, WatchClient>();
  const secure = opts.tls?.ca || opts.tls?.cert;
  const credentials = secure ? grpc.credentials.createSsl(opts.tls?.ca ?? null, opts.tls?.key ?? null, opts.tls?.cert ?? null) : undefined;
  let next = Math.floor(Math.random() * opts.endpoints.length);

  const clientFor = (endpoint: string): WatchClient => {
    let client = clients.get(endpoint);
    if (!client) {
      const url = new URL(endpoint);
      const creds = url.protocol === 'https:' ? (credentials ?? grpc.credentials.createSsl()) : grpc.credentials.createInsecure();
      const Watch = service();
      // Keepalive pings notice a member that stopped answering (SIGSTOP, a partition) on a quiet stream.
      client = new Watch(url.host, creds, {
        'grpc.keepalive_time_ms': 10_000,
        'grpc.keepalive_timeout_ms': 5_000,
        'grpc.keepalive_permit_without_calls': 1,
      }) as unknown as WatchClient;
      clients.set(endpoint, client);
    }
    return client;
  };

  return {
    open() {
      const endpoint = opts.endpoints[next % opts.endpoints.length]!;
      next++;
      const metadata = new grpc.Metadata();
      metadata.set('hasleader', 'true');
      return { call: clientFor(endpoint).watch(metadata), endpoint };
    },
    close() {
      for (const client of clients.values()) client.close();
      clients.clear();
    },
  };
}
