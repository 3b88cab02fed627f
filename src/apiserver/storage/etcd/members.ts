/**
 * gRPC to one etcd member at a time, for what must name a member rather than reach "the cluster":
 * each member's Status (its database size per endpoint, and which members answer for /readyz/etcd).
 * The same unary calls as the KV client's (grpc-unary.ts), on a connection per member of its own;
 * Status calls are rare and short (a 2 s deadline), so that connection is mostly idle.
 */
import type { EtcdClientOptions } from './etcd-client.js';
import { ProtoReader, ProtoWriter } from './proto-wire.js';
import { MemberConnection } from './grpc-unary.js';

const STATUS = '/etcdserverpb.Maintenance/Status';

export interface MemberStatus {
  endpoint: string;
  dbSize: number;
}

export class EtcdMembers {
  private readonly connections = new Map<string, MemberConnection>();

  constructor(private readonly opts: EtcdClientOptions) {}

  get endpoints(): string[] {
    return this.opts.endpoints;
  }

  /** The member's Status (its database size), or a rejection when it does not answer within `timeoutMs`. */
  async status(endpoint: string, timeoutMs: number): Promise<MemberStatus> {
    let connection = this.connections.get(endpoint);
    if (!connection) this.connections.set(endpoint, (connection = new MemberConnection(new URL(endpoint), this.opts.tls)));
    // StatusRequest has no fields; of StatusResponse only dbSize (3) is read.
    const reply = await connection.call(STATUS, new ProtoWriter().frame(), Date.now() + timeoutMs);
    const r = new ProtoReader(reply, 0, reply.length);
    let dbSize = 0;
    for (let f; (f = r.next()); ) {
      if (f[0] === 3) dbSize = r.varint();
      else r.skip(f[1]);
    }
    return { endpoint, dbSize };
  }

  close(): void {
    for (const connection of this.connections.values()) connection.close();
    this.connections.clear();
  }
}
