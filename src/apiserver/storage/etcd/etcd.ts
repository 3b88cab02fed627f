/**
 * A Store in an etcd v3 cluster, shared by any number of API server replicas, as kube-apiserver's
 * etcd3 storage: keys laid out as kube-apiserver does (etcd-keys.ts), an object's resourceVersion
 * is the etcd revision of its last write (values are stored without it), create/update/delete are
 * transactions comparing the key's mod revision, a range reads at a revision, and a watch is an
 * etcd watch from a revision on the replica's one watch stream (etcd-watch.ts, etcd/watch-stream.ts;
 * watches of one range share an etcd watch, shared-watches.ts),
 * which etcd3's own watcher never touches. Every read is linearizable, so a write acknowledged
 * by one replica is seen by the next read on any other.
 *
 * `currentRevision()` must answer at once: it is the newest revision this replica has seen in
 * any etcd response, and each call also asks etcd for the latest in the background, so a caller
 * waiting for a revision another replica wrote (a list "not older than" it) sees it shortly.
 *
 * Compaction runs as in kube-apiserver (etcd-compactor.ts); keys for which `ttlSeconds` gives a TTL
 * (Events, --event-ttl) are written with an etcd lease, so etcd deletes them when it runs out.
 */
import { Range } from 'etcd3';
import type { KObject } from '../../../api/meta.js';
import type { Logger } from '../../../log/logger.js';
import { type EtcdClientOptions, storeErrorOf, writeErrorOf } from './etcd-client.js';
import type { KeyValue, ResponseHeader, TxnRequest, TxnResponse } from './etcd-proto.js';
import { EtcdKv } from './kv-client.js';
import { COMPACT_REV_KEY, startCompactor } from './etcd-compactor.js';
import { EtcdKeys } from './etcd-keys.js';
import { adopt, decode, encode, EtcdValues, RelayedValue } from './etcd-value.js';
import { EtcdWatch } from './etcd-watch.js';
import { WatchStream } from './watch-stream.js';
import { h2WatchTransport, type WatchTransport } from './watch-transport.js';
import { type EtcdMetrics, type EtcdOperation } from './etcd-metrics.js';
import { EtcdMembers } from './members.js';
import { PreviousStates } from './previous-states.js';
import { type Revisioned, RecentObjects } from './recent-objects.js';
import { SharedWatches } from './shared-watches.js';
import type { RangeOptions, RangeResult, Store, StoredObject, StoreWriteOptions, WatchHandle, WatchOptions } from '../store.js';
import { StoreError } from '../store.js';
import type { ValueTransformer } from '../value-transformer.js';

export interface EtcdStoreOptions extends EtcdClientOptions {
  /** Key prefix of every object (kube-apiserver's --etcd-prefix, default `/registry`). */
  prefix?: string;
  /** Seconds a key lives before etcd deletes it (Events: --event-ttl); undefined keeps it. */
  ttlSeconds?: (key: string) => number | undefined;
  /** Compaction interval (--etcd-compaction-interval); 0 or absent leaves compaction to others. */
  compactionIntervalMs?: number;
  logger?: Logger;
  /** The watch stream's way to etcd (default: a Watch RPC on each member's HTTP/2 connection); tests interpose on it. */
  watchTransport?: (opts: EtcdClientOptions) => WatchTransport;
  /** kube-apiserver's etcd_request_* metrics, when given. */
  metrics?: EtcdMetrics;
  /** Encryption at rest: the values of the keys it claims are stored as it transforms them. */
  transformer?: ValueTransformer;
}

/** How long /readyz waits for etcd (kube-apiserver's --etcd-healthcheck-timeout). */
const HEALTH_TIMEOUT_MS = 2000;
/** kube-apiserver's lease manager shares one lease for up to a minute (or 5% of the TTL) of writes. */
const LEASE_REUSE_MAX_S = 60;

interface Lease {
  ttl: number;
  id: Promise<string>;
  until: number;
}

export class EtcdStore implements Store {
  private revision = 0;
  private compacted = 0;
  private closed = false;
  private refreshing: Promise<void> | undefined;
  private readonly watches = new Set<EtcdWatch>();
  private lease: Lease | undefined;
  private stopCompactor: (() => Promise<void>) | undefined;
  private readonly stream: WatchStream;
  private readonly shared: SharedWatches;
  private readonly members: EtcdMembers;
  private readonly values: EtcdValues;
  private readonly recent = new RecentObjects();
  private readonly previous: PreviousStates;
  /**
   * The JSON of this replica's creates and updates still waiting for etcd's reply, by etcd key: etcd
   * often sends a write's watch event before its reply, and a value that reads as this very text is known
   * JSON without scanning it (etcd-value.ts `relay`).
   */
  private readonly writing = new Map<string, string>();

  private constructor(
    private readonly kv: EtcdKv,
    private readonly keys: EtcdKeys,
    private readonly opts: EtcdStoreOptions,
  ) {
    this.members = new EtcdMembers(opts);
    const transport = (opts.watchTransport ?? h2WatchTransport)(opts);
    this.stream = new WatchStream(transport, { observe: (revision) => this.observeRevision(revision), logger: opts.logger });
    this.shared = new SharedWatches(this.stream, () => this.revision);
    this.values = new EtcdValues(opts.transformer);
    this.previous = new PreviousStates(this.recent, {
      read: (key, etcdKey, revision) => this.call(key, () => this.kv.range({ key: Buffer.from(etcdKey), revision }), storeErrorOf, 'get').then((res) => res.kvs[0]),
      open: (key, etcdKey, value, revision) => this.open(key, etcdKey, value, revision),
      closed: () => this.closed,
    });
  }

  /** Connects and reads the current and compacted revisions; fails when etcd cannot be reached. */
  static async open(opts: EtcdStoreOptions): Promise<EtcdStore> {
    const store = new EtcdStore(new EtcdKv(opts), new EtcdKeys(opts.prefix ?? '/registry'), opts);
    try {
      await store.refresh();
    } catch (err) {
      store.stream.close();
      store.members.close();
      store.kv.close();
      throw storeErrorOf(err, '');
    }
    if (opts.compactionIntervalMs) {
      store.stopCompactor = startCompactor(store.kv, opts.compactionIntervalMs, {
        compacted: (rev) => store.observeCompacted(rev),
        logger: opts.logger,
      });
    }
    return store;
  }

  currentRevision(): number {
    if (!this.closed && !this.refreshing) {
      this.refreshing = this.refresh()
        .catch(() => undefined)
        .finally(() => (this.refreshing = undefined));
    }
    return this.revision;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const res = await this.call(key, () => this.kv.range({ key: Buffer.from(this.keys.toEtcd(key)) }), storeErrorOf, 'get');
    this.observe(res.header);
    const kv = res.kvs[0];
    if (!kv) return undefined;
    const stored = await this.stored(key, kv, Number(res.header.revision));
    return this.values.isStale(key, kv.value) ? { ...stored, stale: true } : stored;
  }

  async create(key: string, object: KObject, options?: StoreWriteOptions): Promise<StoredObject> {
    const etcdKey = Buffer.from(this.keys.toEtcd(key));
    const json = encode(object);
    const value = this.values.seal(key, etcdKey.toString(), json);
    const leasing = this.leaseFor(key);
    const lease = leasing && (await leasing);
    const res = await this.writingTxn('create', key, etcdKey, json, {
      compare: [{ key: etcdKey, target: 'Mod', result: 'Equal', mod_revision: 0 }],
      success: [{ request_put: { key: etcdKey, value, lease } }],
      failure: [{ request_range: { key: etcdKey } }],
    });
    if (!res.succeeded) {
      const cur = res.responses[0]?.response_range?.kvs[0];
      throw new StoreError('KeyExists', key, `key ${key} already exists`, cur ? Number(cur.mod_revision) : undefined);
    }
    return this.written(key, etcdKey, json, Number(res.header.revision), options?.handOver ? object : undefined);
  }

  async update(key: string, object: KObject, expectedRevision?: number, options?: StoreWriteOptions): Promise<StoredObject> {
    const etcdKey = Buffer.from(this.keys.toEtcd(key));
    const json = encode(object);
    const value = this.values.seal(key, etcdKey.toString(), json);
    const leasing = this.leaseFor(key);
    const lease = leasing && (await leasing);
    const res = await this.writingTxn('update', key, etcdKey, json, {
      compare: [revisionCompare(etcdKey, expectedRevision)],
      success: [{ request_put: { key: etcdKey, value, lease } }],
      failure: [{ request_range: { key: etcdKey } }],
    });
    if (!res.succeeded) throw this.failedCas(key, res, expectedRevision);
    return this.written(key, etcdKey, json, Number(res.header.revision), options?.handOver ? object : undefined);
  }

  /**
   * The newest state of `key` this replica has seen (written, read or watched), without asking etcd:
   * it may be stale, which a compare-and-swap on its revision detects. Not for values encryption
   * at rest claims, whose staleness (`StoredObject.stale`) only a read of the stored value tells.
   */
  cached(key: string): StoredObject | undefined {
    if (this.closed || this.opts.transformer?.forKey(key)) return undefined;
    const seen = this.recent.latest(this.keys.toEtcd(key));
    return seen && { key, object: seen.object, revision: seen.revision };
  }

  async delete(key: string, expectedRevision?: number): Promise<StoredObject> {
    const etcdKey = Buffer.from(this.keys.toEtcd(key));
    const res = await this.txn('delete', key, {
      compare: [revisionCompare(etcdKey, expectedRevision)],
      success: [{ request_delete_range: { key: etcdKey, prev_kv: true } }],
      failure: [{ request_range: { key: etcdKey } }],
    });
    if (!res.succeeded) throw this.failedCas(key, res, expectedRevision);
    const prev = res.responses[0]?.response_delete_range?.prev_kvs[0];
    // The compare proved the key present, and etcd returns it with the delete in the same revision.
    if (!prev) throw new Error(`etcd deleted ${key} without returning its value`);
    const revision = Number(res.header.revision);
    this.recent.deleted(etcdKey.toString(), revision);
    return { key, object: await this.values.open(key, etcdKey.toString(), prev.value, revision), revision };
  }

  async range(options: RangeOptions): Promise<RangeResult> {
    const prefix = this.keys.toEtcd(options.prefix);
    const end = Range.prefix(prefix).end;
    const start = Buffer.from(options.after === undefined ? prefix : `${this.keys.toEtcd(options.after)}\u0000`);
    const at = options.revision !== undefined && options.revision > 0 ? options.revision : undefined;
    if (start.compare(end) >= 0) return { items: [], revision: at ?? this.revision, remaining: 0 };
    if (at !== undefined && at < this.compacted) throw this.compactedError(options.prefix, at);
    const res = await this.call(
      options.prefix,
      () => this.kv.range({ key: start, range_end: end, limit: options.limit ?? 0, revision: at ?? 0 }),
      storeErrorOf,
      'list',
    );
    this.observe(res.header);
    const toKey = this.keys.reverse(options.prefix);
    const asOf = at ?? Number(res.header.revision);
    const decoded = res.kvs.map((kv) => this.stored(toKey(kv.key.toString()), kv, asOf));
    // Only values whose DEK a KMS plugin must decrypt first are promises.
    const items = decoded.some((d) => d instanceof Promise) ? await Promise.all(decoded) : (decoded as StoredObject[]);
    return { items, revision: at ?? Number(res.header.revision), remaining: Number(res.count) - items.length };
  }

  async count(prefix: string): Promise<number> {
    const etcdPrefix = this.keys.toEtcd(prefix);
    const res = await this.call(
      prefix,
      () => this.kv.range({ key: Buffer.from(etcdPrefix), range_end: Range.prefix(etcdPrefix).end, count_only: true }),
      storeErrorOf,
      'listWithCount',
    );
    this.observe(res.header);
    return Number(res.count);
  }

  watch(prefix: string, options: WatchOptions): WatchHandle {
    if (this.closed) throw new Error('store is closed');
    const watch = new EtcdWatch(this.shared, {
      etcdPrefix: this.keys.toEtcd(prefix),
      toKey: this.keys.reverse(prefix),
      relay: (key, etcdKey, value, revision) => this.relay(key, etcdKey, value, revision),
      previous: (key, etcdKey, revision, ev) => this.previous.before(key, etcdKey, revision, ev),
      deleted: (etcdKey, revision) => this.recent.deleted(etcdKey, revision),
      options,
      compacted: () => this.compacted,
      observeCompacted: (revision) => this.observeCompacted(revision),
      onStop: (w) => this.watches.delete(w),
    });
    this.watches.add(watch);
    watch.start();
    return watch;
  }

  /** Compacts etcd's history up to `revision` (the compactor's step; tests call it directly). */
  async compact(revision: number): Promise<void> {
    await this.call('', () => this.kv.compact({ revision }));
    this.observeCompacted(revision);
  }

  /**
   * A quorum read with kube-apiserver's 2 s health deadline. When it fails, the reason names each
   * member that did not answer its Status either (/readyz/etcd shows it; /readyz withholds it).
   */
  async checkHealth(): Promise<void> {
    const key = Buffer.from(`${this.keys.prefix}/health`);
    const statuses = Promise.allSettled(this.members.endpoints.map((e) => this.members.status(e, HEALTH_TIMEOUT_MS)));
    try {
      // A member that is down is the cluster's problem only when no other answers.
      const deadline = Date.now() + HEALTH_TIMEOUT_MS;
      const res = await this.call('', () => this.kv.range({ key }, { deadline }));
      this.observe(res.header);
    } catch (err) {
      const down = (await statuses).flatMap((s, i) => (s.status === 'rejected' ? [`${this.members.endpoints[i]} (${(s.reason as Error).message})`] : []));
      const members = down.length ? `; members not answering: ${down.join(', ')}` : '; every member answers its status';
      if (err instanceof StoreError) throw new StoreError(err.code, err.key, `${err.message}${members}`, err.revision);
      throw err;
    }
  }

  /** The database size each member reports, by its client URL as --etcd-servers names it (as upstream); members that do not answer are left out. */
  async sizeBytes(): Promise<{ endpoint: string; bytes: number }[]> {
    const statuses = await Promise.allSettled(this.members.endpoints.map((e) => this.members.status(e, HEALTH_TIMEOUT_MS)));
    return statuses.flatMap((s) => (s.status === 'fulfilled' ? [{ endpoint: s.value.endpoint, bytes: s.value.dbSize }] : []));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.stopCompactor?.();
    for (const w of [...this.watches]) w.stop();
    this.stream.close();
    this.members.close();
    await this.refreshing;
    this.kv.close();
  }

  /** Reads the current revision, and the compacted one as the compactors record it. */
  private async refresh(): Promise<void> {
    const res = await this.kv.range({ key: Buffer.from(COMPACT_REV_KEY) });
    this.observe(res.header);
    const kv = res.kvs[0];
    if (kv) this.observeCompacted(Number(kv.value.toString()));
  }

  private observe(header: ResponseHeader): void {
    this.observeRevision(Number(header.revision));
  }

  private observeRevision(revision: number): void {
    if (revision > this.revision) this.revision = revision;
  }

  private observeCompacted(revision: number): void {
    if (revision > this.compacted) this.compacted = revision;
  }

  private compactedError(key: string, revision: number): StoreError {
    return new StoreError('Compacted', key, `revision ${revision} has been compacted; the oldest available is ${this.compacted}`, this.compacted);
  }

  /** The stored object of a key read at revision `asOf` (absent: only its own revision is known to hold it). */
  private stored(key: string, kv: KeyValue, asOf?: number): StoredObject | Promise<StoredObject> {
    const revision = Number(kv.mod_revision);
    const object = this.open(key, kv.key.toString(), kv.value, revision, asOf);
    return object instanceof Promise ? object.then((o) => ({ key, object: o, revision })) : { key, object, revision };
  }

  /** The object an etcd value holds, decoded once however many reads and watches see it; a read's `asOf` is kept (recent-objects.ts). */
  private open(key: string, etcdKey: string, value: Uint8Array, revision: number, asOf?: number): KObject | Promise<KObject> {
    const known = this.recent.at(etcdKey, revision);
    if (known) {
      if (asOf !== undefined) this.recent.saw(etcdKey, known, asOf);
      return known.object;
    }
    const object = this.values.open(key, etcdKey, value, revision);
    if (!(object instanceof Promise)) {
      this.recent.saw(etcdKey, { object, revision }, asOf);
      return object;
    }
    return object.then((o) => {
      this.recent.saw(etcdKey, { object: o, revision }, asOf);
      return o;
    });
  }

  /**
   * A value as a watch delivers it: what this replica already holds at that revision, else relayed
   * without parsing (etcd-value.ts `relay`) and remembered, so that whatever reads it later parses it once.
   */
  private relay(key: string, etcdKey: string, value: Uint8Array, revision: number): Revisioned | Promise<Revisioned> {
    const known = this.recent.at(etcdKey, revision);
    if (known) return known;
    const relayed = this.values.relay(key, value, revision, this.writing.get(etcdKey));
    if (relayed) {
      this.recent.saw(etcdKey, relayed);
      return relayed;
    }
    const object = this.open(key, etcdKey, value, revision);
    return object instanceof Promise ? object.then((o) => ({ object: o, revision })) : { object, revision };
  }

  /** What a create or update stored: `json` (the encoding of `handedOver`, when the writer gave it up) as written at `revision`. */
  private written(key: string, etcdKey: Buffer, json: string, revision: number, handedOver: KObject | undefined): StoredObject {
    const k = etcdKey.toString();
    // etcd often sends the write's watch event before its reply: the watch has relayed it then, and
    // the writer's own object, adopted, saves the parse of its text.
    const seen = this.recent.at(k, revision);
    let object: KObject;
    if (seen instanceof RelayedValue && !seen.built && handedOver) object = seen.settle(adopt(handedOver, json, revision, seen.text));
    else object = seen?.object ?? (handedOver ? adopt(handedOver, json, revision) : decode(json, revision));
    this.recent.saw(k, { object, revision });
    return { key, object, revision };
  }

  /** A lost compare-and-swap; the state etcd returned with it is this replica's newest. */
  private failedCas(key: string, res: TxnResponse, expected: number | undefined): StoreError {
    const cur = res.responses[0]?.response_range?.kvs[0];
    if (!cur) {
      this.recent.deleted(this.keys.toEtcd(key), Number(res.header.revision));
      return new StoreError('KeyNotFound', key, `key ${key} not found`);
    }
    const revision = Number(cur.mod_revision);
    if (!this.opts.transformer?.forKey(key)) {
      // Decoded now (not when an update asks for it) so a value that cannot be decoded fails here, once.
      try {
        this.stored(key, cur);
      } catch {
        // The caller reads it again and reports what is wrong with it.
      }
    }
    return new StoreError('Conflict', key, `key ${key} is at revision ${revision}, expected ${expected}`, revision);
  }

  /** A create's or update's transaction, its JSON known (`writing`) until etcd replies. */
  private writingTxn(operation: EtcdOperation, key: string, etcdKey: Buffer, json: string, req: TxnRequest): Promise<TxnResponse> {
    const k = etcdKey.toString();
    this.writing.set(k, json);
    const done = (): void => {
      if (this.writing.get(k) === json) this.writing.delete(k);
    };
    const res = this.txn(operation, key, req);
    res.then(done, done);
    return res;
  }

  private txn(operation: EtcdOperation, key: string, req: TxnRequest): Promise<TxnResponse> {
    return this.call(key, () => this.kv.txn(req), writeErrorOf, operation).then((res) => {
      this.observe(res.header);
      return res;
    });
  }

  /**
   * Runs an etcd call, turning its failures into StoreErrors (Compacted after re-reading how far). One
   * promise reaction over the call's own, as every read and write of the store passes through here.
   */
  private call<T>(key: string, run: () => Promise<T>, errorOf = storeErrorOf, operation?: EtcdOperation): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    const metrics = this.opts.metrics;
    let pending: Promise<T>;
    try {
      pending = operation && metrics ? metrics.measure(operation, key, run) : run();
    } catch (err) {
      pending = Promise.reject(err as Error);
    }
    return pending.then(undefined, (err: unknown) => this.failed(key, err, errorOf));
  }

  private async failed(key: string, err: unknown, errorOf: typeof storeErrorOf): Promise<never> {
    const mapped = errorOf(err, key, this.compacted);
    if (mapped instanceof StoreError && mapped.code === 'Compacted') {
      await this.refresh().catch(() => undefined);
      throw this.compactedError(key, mapped.revision ?? this.compacted);
    }
    throw mapped;
  }

  /** The lease for a key with a TTL (one lease serves the writes of a short window, as upstream); undefined, at once, for a key without. */
  private leaseFor(key: string): Promise<string> | undefined {
    const ttl = this.opts.ttlSeconds?.(key);
    if (!ttl) return undefined;
    const now = Date.now();
    if (!this.lease || this.lease.ttl !== ttl || now >= this.lease.until) {
      const reuse = Math.min(LEASE_REUSE_MAX_S, Math.ceil(ttl * 0.05));
      const id = this.call(key, () => this.kv.leaseGrant({ TTL: ttl + reuse })).then((r) => r.ID);
      this.lease = { ttl, id, until: now + reuse * 1000 };
      id.catch(() => {
        if (this.lease?.id === id) this.lease = undefined;
      });
    }
    return this.lease.id;
  }
}

/** The compare of an update or delete: the key's mod revision is the expected one, or the key exists. */
function revisionCompare(key: Buffer, expected: number | undefined) {
  return expected === undefined
    ? { key, target: 'Mod' as const, result: 'Greater' as const, mod_revision: 0 }
    : { key, target: 'Mod' as const, result: 'Equal' as const, mod_revision: expected };
}
