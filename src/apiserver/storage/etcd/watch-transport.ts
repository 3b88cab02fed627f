/**
 * The gRPC side of the watch: a Watch RPC (etcd's `etcdserverpb.Watch/Watch`) opened on one member
 * at a time, moving to the next member each time the caller asks for another stream. The RPC carries
 * `hasleader: true`, as etcd's Go client does for kube-apiserver's watches (WithRequireLeader): a
 * member that loses its leader ends the stream instead of leaving it silent, so the watch moves to a
 * member that has one.
 */
import * as grpc from '@grpc/grpc-js';
import type { IWatchRequest, IWatchResponse } from 'etcd3';
import type { EtcdMembers } from './members.js';

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

export function grpcWatchTransport(members: EtcdMembers): WatchTransport {
  const endpoints = members.endpoints;
  let next = Math.floor(Math.random() * endpoints.length);
  return {
    open() {
      const endpoint = endpoints[next % endpoints.length]!;
      next++;
      const metadata = new grpc.Metadata();
      metadata.set('hasleader', 'true');
      return { call: members.client<WatchClient>('Watch', endpoint).watch(metadata), endpoint };
    },
    // The members' channels are the store's to close.
    close() {},
  };
}
