/**
 * The etcd client's options, and how its failures (etcd3's typed errors, kv-client.ts) become
 * StoreErrors.
 *
 * Unary calls carry a deadline; the watch stream does not. A failed call is not retried by the
 * client: a transaction that failed on a lost connection may still have been applied, and retrying
 * a compare-and-swap would then answer "exists" or "conflict" for the caller's own write (etcd's
 * Go client only retries a mutation when it was never sent). Reads, which are safe to repeat, are
 * retried once on another member. Each member has a circuit breaker, so calls skip a member that
 * keeps failing and try it again a few seconds later.
 */
import { isBrokenCircuitError } from 'cockatiel';
import { GRPCDeadlineExceededError, GRPCOutOfRangeError, isRecoverableError } from 'etcd3';
import { StoreError } from '../store.js';
import { neverSent as unsentCall } from './grpc-unary.js';

export interface EtcdClientOptions {
  /** Client URLs of the members, e.g. `https://10.0.0.1:2379` (kube-apiserver's --etcd-servers). */
  endpoints: string[];
  /** PEM files' contents for TLS to etcd (--etcd-cafile, --etcd-certfile, --etcd-keyfile). */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** Deadline of each unary call (default 10 s). */
  requestTimeoutMs?: number;
}

const COMPACTED = 'required revision has been compacted';
const FUTURE = 'required revision is a future revision';

/**
 * A StoreError for etcd's failures that callers act on (compacted or future revision, etcd
 * unreachable or too slow), or the error itself. `compacted` is the oldest revision known to be
 * kept, for Compacted.
 */
export function storeErrorOf(err: unknown, key: string, compacted?: number): unknown {
  if (!(err instanceof Error)) return err;
  if (err instanceof GRPCOutOfRangeError && err.message.includes(COMPACTED)) {
    return new StoreError('Compacted', key, 'The requested revision has been compacted', compacted);
  }
  if (err instanceof GRPCOutOfRangeError && err.message.includes(FUTURE)) {
    return new StoreError('FutureRevision', key, 'The requested revision is newer than the store');
  }
  if (err instanceof GRPCDeadlineExceededError) return new StoreError('Timeout', key, `etcd did not answer in time: ${err.message}`);
  if (unavailable(err)) return new StoreError('Unavailable', key, `etcd is unavailable: ${err.message}`);
  return err;
}

/**
 * A write's failure: as storeErrorOf, except that a write that may have reached etcd before the
 * connection failed (or etcd's own proposal timed out) is a Timeout (504: its outcome is unknown),
 * never Unavailable (503: it was not applied). Only a call that never left the client, or that etcd
 * refused for want of a leader, is Unavailable, as etcd's Go client only retries mutations then.
 */
export function writeErrorOf(err: unknown, key: string, compacted?: number): unknown {
  const mapped = storeErrorOf(err, key, compacted);
  if (!(mapped instanceof StoreError)) return mapped;
  // Out of time before a connection to send it on: not applied.
  if (neverSent(err as Error)) return mapped.code === 'Timeout' ? new StoreError('Unavailable', key, `etcd is unavailable: ${(err as Error).message}`) : mapped;
  if (mapped.code !== 'Unavailable') return mapped;
  return new StoreError('Timeout', key, `etcd did not confirm the write, which may or may not have been applied: ${(err as Error).message}`);
}

function neverSent(err: Error): boolean {
  return isBrokenCircuitError(err) || unsentCall(err) || /etcdserver: no leader/.test(err.message);
}

/** etcd cannot be reached, has no leader, or its circuit breaker is open. */
function unavailable(err: Error): boolean {
  return isRecoverableError(err) || isBrokenCircuitError(err) || /etcdserver: (no leader|leader changed|request timed out)/.test(err.message);
}
