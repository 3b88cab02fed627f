/**
 * gRPC to one etcd member at a time, for what must name a member rather than reach "the cluster":
 * each member's Status (its database size per endpoint, and which members answer for /readyz/etcd).
 * Built on grpc-js and etcd's rpc.proto as the etcd3 package ships it, with one channel per member.
 * Status calls are rare and short (a 2 s deadline), so the channels need no keepalive pings.
 */
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { EtcdClientOptions } from './etcd-client.js';

let services: grpc.GrpcObject | undefined;

/** One of etcd's services, from the etcd3 package's copy of etcd's rpc.proto. */
function etcdService(name: 'Maintenance'): grpc.ServiceClientConstructor {
  if (!services) {
    const proto = createRequire(import.meta.url).resolve('etcd3/proto/rpc.proto');
    const def = loadSync(proto, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    services = grpc.loadPackageDefinition(def)['etcdserverpb'] as grpc.GrpcObject;
  }
  return services[name] as grpc.ServiceClientConstructor;
}

/** TLS for an https:// member (the given files, else the system's roots), plaintext for http://. */
function channelCredentials(url: URL, tls: EtcdClientOptions['tls']): grpc.ChannelCredentials {
  if (url.protocol !== 'https:') return grpc.credentials.createInsecure();
  return tls?.ca || tls?.cert ? grpc.credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null) : grpc.credentials.createSsl();
}

export interface MemberStatus {
  endpoint: string;
  dbSize: number;
}

export class EtcdMembers {
  private readonly clients = new Map<string, grpc.Client>();

  constructor(private readonly opts: EtcdClientOptions) {}

  get endpoints(): string[] {
    return this.opts.endpoints;
  }

  private client(endpoint: string): grpc.Client & { status: StatusCall } {
    let client = this.clients.get(endpoint);
    if (!client) {
      const url = new URL(endpoint);
      client = new (etcdService('Maintenance'))(url.host, channelCredentials(url, this.opts.tls));
      this.clients.set(endpoint, client);
    }
    return client as grpc.Client & { status: StatusCall };
  }

  /** The member's Status (its database size), or a rejection when it does not answer within `timeoutMs`. */
  status(endpoint: string, timeoutMs: number): Promise<MemberStatus> {
    const client = this.client(endpoint);
    return new Promise((resolve, reject) => {
      client.status({}, { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (err || !res) reject(err ?? new Error('empty status'));
        else resolve({ endpoint, dbSize: Number(res.dbSize) });
      });
    });
  }

  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}

type StatusCall = (req: object, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, res?: { dbSize: string }) => void) => void;
