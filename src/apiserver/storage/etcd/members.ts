/**
 * gRPC to one etcd member at a time, for what must name a member rather than reach "the cluster":
 * the replica's watch stream (which moves from member to member) and each member's Status (its
 * database size per endpoint, and which members answer for /readyz/etcd). Built on grpc-js and
 * etcd's rpc.proto as the etcd3 package ships it, decoded as etcd3 decodes it (snake_case fields,
 * 64-bit integers as strings), with one channel per member reused by every call.
 */
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { EtcdClientOptions } from './etcd-client.js';

let services: grpc.GrpcObject | undefined;

/** One of etcd's services, from the etcd3 package's copy of etcd's rpc.proto. */
function etcdService(name: 'Watch' | 'Maintenance'): grpc.ServiceClientConstructor {
  if (!services) {
    const proto = createRequire(import.meta.url).resolve('etcd3/proto/rpc.proto');
    const def = loadSync(proto, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    services = grpc.loadPackageDefinition(def)['etcdserverpb'] as grpc.GrpcObject;
  }
  return services[name] as grpc.ServiceClientConstructor;
}

/** Keepalive pings notice a member that stopped answering (SIGSTOP, a partition) on a quiet stream. */
const CHANNEL_OPTIONS = { 'grpc.keepalive_time_ms': 10_000, 'grpc.keepalive_timeout_ms': 5_000, 'grpc.keepalive_permit_without_calls': 1 };

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

  /** A client of `name` on `endpoint`, sharing the member's channel with the other services. */
  client<T extends grpc.Client>(name: 'Watch' | 'Maintenance', endpoint: string): T {
    const key = `${name} ${endpoint}`;
    let client = this.clients.get(key);
    if (!client) {
      const url = new URL(endpoint);
      const creds = channelCredentials(url, this.opts.tls);
      const Service = etcdService(name);
      const first = [...this.clients.entries()].find(([k]) => k.endsWith(` ${endpoint}`))?.[1];
      client = new Service(url.host, creds, first ? { ...CHANNEL_OPTIONS, channelOverride: first.getChannel() } : CHANNEL_OPTIONS);
      this.clients.set(key, client);
    }
    return client as T;
  }

  /** The member's Status (its database size), or a rejection when it does not answer within `timeoutMs`. */
  status(endpoint: string, timeoutMs: number): Promise<MemberStatus> {
    const client = this.client<grpc.Client & { status: StatusCall }>('Maintenance', endpoint);
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
