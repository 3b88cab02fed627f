/**
 * kube-apiserver's KMS v2 metrics (its envelope and value metrics), same names, labels and buckets.
 * Key IDs and the server's identity are only exported hashed (`sha256:<hex>`).
 * - apiserver_envelope_encryption_kms_operations_latency_seconds{provider_name,method_name,grpc_status_code}:
 *   each call to a plugin, by its full gRPC method (`/v2.KeyManagementService/Decrypt`) and status code
 * - apiserver_envelope_encryption_key_id_hash_total and _key_id_hash_last_timestamp_seconds
 *   {transformation_type,provider_name,key_id_hash,apiserver_id_hash}: values sealed and opened, by key ID
 * - apiserver_envelope_encryption_key_id_hash_status_last_timestamp_seconds{provider_name,key_id_hash,apiserver_id_hash}
 * - apiserver_envelope_encryption_invalid_key_id_from_status_total{provider_name,error}: `empty`, `too_long`
 * - apiserver_envelope_encryption_dek_source_cache_size{provider_name}: decrypted seeds kept
 * - apiserver_storage_envelope_transformation_cache_misses_total: reads whose seed the plugin had to decrypt
 * - apiserver_storage_data_key_generation_duration_seconds and _failures_total: new write seeds
 */
import { createHash, randomUUID } from 'node:crypto';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

const KEY_ID_LABELS = ['transformation_type', 'provider_name', 'key_id_hash', 'apiserver_id_hash'] as const;
type KeyIdLabel = (typeof KEY_ID_LABELS)[number];
/** Key-ID label sets kept per family; the least recently used is dropped beyond it (upstream's LRU of 100). */
const MAX_KEY_ID_SERIES = 100;

/** A key ID as upstream logs and labels it. */
export function sha256Hex(text: string): string {
  return text === '' ? '' : `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** gRPC's status code as Go names it (`DeadlineExceeded`), from grpc-js's `DEADLINE_EXCEEDED`. */
export function grpcCodeName(name: string): string {
  return name
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

export class KmsMetrics {
  private readonly latency: Histogram<'provider_name' | 'method_name' | 'grpc_status_code'>;
  private readonly keyIdTotal: Counter<KeyIdLabel>;
  private readonly keyIdLast: Gauge<KeyIdLabel>;
  private readonly keyIdStatusLast: Gauge<'provider_name' | 'key_id_hash' | 'apiserver_id_hash'>;
  private readonly invalidKeyId: Counter<'provider_name' | 'error'>;
  private readonly seedCacheSize: Gauge<'provider_name'>;
  readonly cacheMisses: Counter;
  private readonly keyGeneration: Histogram;
  private readonly keyGenerationFailures: Counter;
  private readonly apiserverIdHash: string;
  /** Hashes of the key IDs seen (there are few), so a write hashes nothing. */
  private readonly hashes = new Map<string, string>();
  /** The label sets of the key-ID series, least recently used first. */
  private readonly keyIdSeries = new Map<string, Record<KeyIdLabel, string>>();
  private readonly statusSeries = new Map<string, Record<'provider_name' | 'key_id_hash' | 'apiserver_id_hash', string>>();

  constructor(registry: Registry, apiserverId = `apiserver-${randomUUID()}`) {
    const registers = [registry];
    this.apiserverIdHash = sha256Hex(apiserverId);
    this.latency = new Histogram({
      name: 'apiserver_envelope_encryption_kms_operations_latency_seconds',
      help: 'KMS operation duration with gRPC error code status total.',
      labelNames: ['provider_name', 'method_name', 'grpc_status_code'],
      // 0.1 ms to ~52 s, as upstream.
      buckets: Array.from({ length: 20 }, (_, i) => 0.0001 * 2 ** i),
      registers,
    });
    this.keyIdTotal = new Counter({ name: 'apiserver_envelope_encryption_key_id_hash_total', help: 'Number of times a keyID is used split by transformation type, provider, and apiserver identity.', labelNames: KEY_ID_LABELS, registers });
    this.keyIdLast = new Gauge({ name: 'apiserver_envelope_encryption_key_id_hash_last_timestamp_seconds', help: 'The last time in seconds when a keyID was used.', labelNames: KEY_ID_LABELS, registers });
    this.keyIdStatusLast = new Gauge({
      name: 'apiserver_envelope_encryption_key_id_hash_status_last_timestamp_seconds',
      help: 'The last time in seconds when a keyID was returned by the Status RPC call.',
      labelNames: ['provider_name', 'key_id_hash', 'apiserver_id_hash'],
      registers,
    });
    this.invalidKeyId = new Counter({ name: 'apiserver_envelope_encryption_invalid_key_id_from_status_total', help: 'Number of times an invalid keyID is returned by the Status RPC call split by error.', labelNames: ['provider_name', 'error'], registers });
    this.seedCacheSize = new Gauge({
      name: 'apiserver_envelope_encryption_dek_source_cache_size',
      help: 'Number of records in data encryption key (DEK) source cache. On a restart, this value is an approximation of the number of decrypt RPC calls the server will make to the KMS plugin.',
      labelNames: ['provider_name'],
      registers,
    });
    this.cacheMisses = new Counter({ name: 'apiserver_storage_envelope_transformation_cache_misses_total', help: 'Total number of cache misses while accessing key decryption key(KEK).', registers });
    this.keyGeneration = new Histogram({
      name: 'apiserver_storage_data_key_generation_duration_seconds',
      help: 'Latencies in seconds of data encryption key(DEK) generation operations.',
      buckets: Array.from({ length: 14 }, (_, i) => 5e-6 * 2 ** i),
      registers,
    });
    this.keyGenerationFailures = new Counter({ name: 'apiserver_storage_data_key_generation_failures_total', help: 'Total number of failed data encryption key(DEK) generation operations.', registers });
  }

  /** One call to a plugin: `method` is its full gRPC method (`/v2.KeyManagementService/Decrypt`), `code` gRPC's code name (`OK`). */
  call(provider: string, method: string, seconds: number, code: string): void {
    this.latency.observe({ provider_name: provider, method_name: method, grpc_status_code: code }, seconds);
  }

  /** A value sealed (`to_storage`) or opened (`from_storage`) under `keyId`. */
  keyIdUsed(type: 'to_storage' | 'from_storage', provider: string, keyId: string): void {
    const labels = this.series(this.keyIdSeries, `${type}\0${provider}\0${keyId}`, () => ({ transformation_type: type, provider_name: provider, key_id_hash: this.hash(keyId), apiserver_id_hash: this.apiserverIdHash }), (old) => {
      this.keyIdTotal.remove(old);
      this.keyIdLast.remove(old);
    });
    this.keyIdTotal.inc(labels);
    this.keyIdLast.set(labels, Date.now() / 1000);
  }

  /** A Status answer: its key ID, or why it is not a valid one. */
  statusKeyId(provider: string, keyId: string, invalid?: 'empty' | 'too_long'): void {
    if (invalid) {
      this.invalidKeyId.inc({ provider_name: provider, error: invalid });
      return;
    }
    const labels = this.series(this.statusSeries, `${provider}\0${keyId}`, () => ({ provider_name: provider, key_id_hash: this.hash(keyId), apiserver_id_hash: this.apiserverIdHash }), (old) => this.keyIdStatusLast.remove(old));
    this.keyIdStatusLast.set(labels, Date.now() / 1000);
  }

  seedCache(provider: string, size: number): void {
    this.seedCacheSize.set({ provider_name: provider }, size);
  }

  keyGenerated(seconds: number, failed: boolean): void {
    if (failed) this.keyGenerationFailures.inc();
    else this.keyGeneration.observe(seconds);
  }

  private hash(keyId: string): string {
    let h = this.hashes.get(keyId);
    if (h === undefined) {
      if (this.hashes.size >= MAX_KEY_ID_SERIES) this.hashes.clear();
      this.hashes.set(keyId, (h = sha256Hex(keyId)));
    }
    return h;
  }

  /** The label set for `key`, made most recently used; the least recently used beyond the bound is dropped. */
  private series<L extends string>(kept: Map<string, Record<L, string>>, key: string, make: () => Record<L, string>, drop: (old: Record<L, string>) => void): Record<L, string> {
    let labels = kept.get(key);
    if (labels) {
      kept.delete(key);
    } else {
      labels = make();
      if (kept.size >= MAX_KEY_ID_SERIES) {
        const [oldest, old] = kept.entries().next().value as [string, Record<L, string>];
        kept.delete(oldest);
        drop(old);
      }
    }
    kept.set(key, labels);
    return labels;
  }
}
