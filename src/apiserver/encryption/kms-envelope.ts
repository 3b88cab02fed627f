/**
 * The `kms` provider, apiVersion v2, with kube-apiserver's DEK handling (envelope/kmsv2):
 *
 * - Writes: a 32-byte seed made here and encrypted once by the plugin (Encrypt) serves every write;
 *   each value gets fresh 32-byte info, its key is HKDF-SHA256-Expand(seed, info) and it is sealed
 *   with AES-256-GCM (random nonce, the storage key as additional data). Stored:
 *   `k8s:enc:kms:v2:<name>:` + the EncryptedObject protobuf (encrypted seed, key ID, annotations,
 *   HKDF_SHA256_XNONCE_AES_GCM_SEED, and info + nonce + ciphertext + tag as encryptedData).
 * - The seed is checked by polling Status (every minute; every 10 s while failing): a new key ID
 *   makes a new seed; a healthy answer extends the seed's write validity to 3 minutes from then.
 *   So a plugin that goes down stops writes within 3 minutes, never sooner (upstream's
 *   kmsv2PluginWriteDEKSourceMaxTTL), and writes fail with 503 until it is back.
 * - Reads decrypt each encrypted seed through the plugin once and keep it (24 h): a plugin that is
 *   down still lets the values whose seed is known be read; the others get 503.
 * - Values written with AES_GCM_KEY (a DEK, no seed: older kube-apiservers) are read too.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { Logger } from '../../log/logger.js';
import { StoreError } from '../storage/store.js';
import { ENCRYPTED_PREFIX } from '../storage/value-transformer.js';
import { gcmOpen, gcmSeal, type Provider } from './providers.js';
import type { EncryptResponse, KmsService } from './kms-service.js';
import { sha256Hex, type KmsMetrics } from './kms-metrics.js';

export interface KmsTimings {
  /** Status poll interval while healthy (upstream 1 min). */
  healthyIntervalMs: number;
  /** Status poll interval while failing (upstream 10 s). */
  failingIntervalMs: number;
  /** How long a seed may be written with after the last healthy Status (upstream 3 min). */
  writeValidityMs: number;
  /** How long a decrypted seed is kept for reads (upstream 24 h). */
  cacheTtlMs: number;
}

export const KMS_TIMINGS: KmsTimings = { healthyIntervalMs: 60_000, failingIntervalMs: 10_000, writeValidityMs: 180_000, cacheTtlMs: 86_400_000 };

const SEED_SOURCE = 1;
const KEY_SOURCE = 0;
const INFO_BYTES = 32;
const MAX_KEY_ID = 1024;
const MAX_DEK_SOURCE = 1024;
const MAX_ANNOTATIONS = 32 * 1024;

interface EncryptedObject {
  encryptedData: Uint8Array;
  keyID: string;
  encryptedDEKSource: Uint8Array;
  annotations: Record<string, Uint8Array>;
  encryptedDEKSourceType: number;
}

const EncryptedObjectType = protobuf.loadSync(fileURLToPath(new URL('./kms/encrypted-object.proto', import.meta.url))).lookupType('v2.EncryptedObject');

/** The write state: the seed, and how the plugin encrypted it. */
interface WriteState {
  seed: Buffer;
  keyId: string;
  encryptedSeed: Buffer;
  annotations: Record<string, Buffer>;
  validUntil: number;
}

/** HKDF-Expand (RFC 5869) with SHA-256 for one 32-byte block: the seed is already a uniform key, as upstream uses it. */
function hkdfExpand32(seed: Uint8Array, info: Uint8Array): Buffer {
  return createHmac('sha256', seed).update(info).update(Buffer.of(1)).digest();
}

function cacheKey(o: EncryptedObject): string {
  const h = createHash('sha256').update(String(o.encryptedDEKSourceType)).update('\0').update(o.keyID).update('\0').update(o.encryptedDEKSource);
  for (const name of Object.keys(o.annotations).sort()) h.update('\0').update(name).update('\0').update(o.annotations[name]!);
  return h.digest('base64');
}

function validate(o: EncryptedObject): void {
  if (o.encryptedDEKSourceType !== SEED_SOURCE && o.encryptedDEKSourceType !== KEY_SOURCE) throw new Error(`unknown encryptedDEKSourceType: ${o.encryptedDEKSourceType}`);
  if (o.encryptedData.length === 0) throw new Error('encrypted data is empty');
  if (o.encryptedDEKSource.length === 0 || o.encryptedDEKSource.length > MAX_DEK_SOURCE) throw new Error('failed to validate encrypted DEK source: empty or over 1 kB');
  validateKeyId(o.keyID);
  const size = Object.entries(o.annotations).reduce((n, [k, v]) => n + k.length + v.length, 0);
  if (size > MAX_ANNOTATIONS) throw new Error(`failed to validate annotations: ${size} bytes, over 32 kB`);
}

function validateKeyId(keyId: string): void {
  if (keyId === '') throw new Error('failed to validate key id: keyID is empty');
  if (keyId.length > MAX_KEY_ID) throw new Error(`failed to validate key id: keyID is ${keyId.length} bytes, over 1 kB`);
}

export class KmsV2Provider implements Provider {
  readonly label: string;
  private readonly prefix: Buffer;
  private state: WriteState | undefined;
  /** Decrypted seeds (or DEKs) by the EncryptedObject fields that name them. */
  private readonly seeds = new Map<string, { key: Buffer; source: number; until: number }>();
  private readonly decrypting = new Map<string, Promise<Buffer>>();
  private lastCheck: { at: number; err?: Error } | undefined;
  private checking: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly service: KmsService,
    private readonly logger: Logger,
    private readonly timings: KmsTimings = KMS_TIMINGS,
    private readonly metrics?: KmsMetrics,
  ) {
    this.label = `${ENCRYPTED_PREFIX}kms:v2:${name}:`;
    this.prefix = Buffer.from(this.label);
  }

  /** Polls Status from now on (the first poll at once), making and renewing the write seed. */
  start(): Promise<void> {
    const loop = async (): Promise<void> => {
      await this.check();
      if (this.closed) return;
      const wait = this.lastCheck?.err ? this.timings.failingIntervalMs : this.timings.healthyIntervalMs;
      this.timer = setTimeout(() => void loop(), wait);
      this.timer.unref();
    };
    return loop();
  }

  /**
   * The kms-providers health check: the last Status poll's outcome while it is fresh (a minute when
   * healthy, 10 s when not, as upstream), else a new poll.
   */
  async healthy(): Promise<void> {
    const last = this.lastCheck;
    const ttl = last?.err ? this.timings.failingIntervalMs : this.timings.healthyIntervalMs;
    if (!last || Date.now() - last.at >= ttl) await this.check();
    if (this.lastCheck?.err) throw this.lastCheck.err;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.service.close();
  }

  seal(data: Uint8Array, authenticatedData: string): Uint8Array {
    const state = this.state;
    if (!state) throw new StoreError('Unavailable', authenticatedData, `KMS provider ${this.name} has no data encryption key yet: ${this.lastCheck?.err?.message ?? 'the plugin has not answered'}`);
    if (Date.now() > state.validUntil) {
      throw new StoreError('Unavailable', authenticatedData, `KMS provider ${this.name}: the data encryption key expired at ${new Date(state.validUntil).toISOString()} without a healthy plugin status since: ${this.lastCheck?.err?.message ?? ''}`);
    }
    const info = randomBytes(INFO_BYTES);
    const sealed = gcmSeal(hkdfExpand32(state.seed, info), data, authenticatedData);
    const object: EncryptedObject = {
      encryptedData: Buffer.concat([info, sealed]),
      keyID: state.keyId,
      encryptedDEKSource: state.encryptedSeed,
      annotations: state.annotations,
      encryptedDEKSourceType: SEED_SOURCE,
    };
    const out = Buffer.concat([this.prefix, EncryptedObjectType.encode(EncryptedObjectType.fromObject(object)).finish()]);
    this.metrics?.keyIdUsed('to_storage', this.name, state.keyId);
    return out;
  }

  /** Upstream's staleness: written by another key ID than the plugin's current one. */
  isCurrent(data: Uint8Array): boolean {
    if (!this.hasPrefix(data)) return false;
    try {
      return this.decodeObject(data).keyID === this.state?.keyId;
    } catch {
      return false;
    }
  }

  open(data: Uint8Array, authenticatedData: string): Uint8Array | Promise<Uint8Array> | undefined {
    if (!this.hasPrefix(data)) return undefined;
    const object = this.decodeObject(data);
    const key = cacheKey(object);
    const cached = this.seeds.get(key);
    if (cached && cached.until > Date.now()) return this.opened(object.keyID, this.decryptWith(cached.key, cached.source, object.encryptedData, authenticatedData));
    this.metrics?.cacheMisses.inc();
    // Values sharing a seed (all of them, until the key ID changes) wait for one Decrypt.
    let seed = this.decrypting.get(key);
    if (!seed) {
      seed = this.service.decrypt({ ciphertext: Buffer.from(object.encryptedDEKSource), uid: randomUUID(), key_id: object.keyID, annotations: object.annotations as Record<string, Buffer> });
      this.decrypting.set(key, seed);
      seed.then(
        (s) => this.remember(key, s, object.encryptedDEKSourceType),
        () => undefined,
      ).finally(() => this.decrypting.delete(key));
    }
    return seed.then((s) => this.opened(object.keyID, this.decryptWith(s, object.encryptedDEKSourceType, object.encryptedData, authenticatedData)));
  }

  private opened(keyId: string, plain: Buffer): Buffer {
    this.metrics?.keyIdUsed('from_storage', this.name, keyId);
    return plain;
  }

  private hasPrefix(data: Uint8Array): boolean {
    return data.length >= this.prefix.length && Buffer.compare(data.subarray(0, this.prefix.length), this.prefix) === 0;
  }

  private decodeObject(data: Uint8Array): EncryptedObject {
    const object = EncryptedObjectType.toObject(EncryptedObjectType.decode(data.subarray(this.prefix.length)), { defaults: true, bytes: Buffer }) as EncryptedObject;
    validate(object);
    return object;
  }

  private decryptWith(key: Buffer, source: number, encryptedData: Uint8Array, authenticatedData: string): Buffer {
    if (source === KEY_SOURCE) return gcmOpen(key, encryptedData, authenticatedData);
    if (encryptedData.length < INFO_BYTES) throw new Error('the stored data was shorter than the required size');
    return gcmOpen(hkdfExpand32(key, encryptedData.subarray(0, INFO_BYTES)), encryptedData.subarray(INFO_BYTES), authenticatedData);
  }

  private remember(key: string, seed: Buffer, source: number): void {
    const now = Date.now();
    for (const [k, v] of this.seeds) if (v.until <= now) this.seeds.delete(k);
    this.seeds.set(key, { key: seed, source, until: now + this.timings.cacheTtlMs });
    this.metrics?.seedCache(this.name, this.seeds.size);
  }

  /** One Status poll (shared by callers meanwhile), then a new seed if the key ID changed. */
  private check(): Promise<void> {
    this.checking ??= this.poll()
      .then(
        () => (this.lastCheck = { at: Date.now() }),
        (err: unknown) => {
          const error = err instanceof Error ? err : new Error(String(err));
          if (!this.lastCheck?.err) this.logger.warn({ provider: this.name, err: error.message }, 'KMS provider is unhealthy');
          this.lastCheck = { at: Date.now(), err: error };
        },
      )
      .then(() => undefined)
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  /** The plugin's answer to the Encrypt of a new seed, checked; timed and counted as upstream's data key generation. */
  private async generated(uid: string, keyId: string, encrypting: Promise<EncryptResponse>): Promise<EncryptResponse> {
    const start = process.hrtime.bigint();
    try {
      const res = await encrypting;
      if (res.key_id !== keyId) throw new Error(`failed to rotate DEK uid=${uid}: Encrypt answered key ID ${res.key_id}, Status ${keyId}`);
      if (res.ciphertext.length === 0 || res.ciphertext.length > MAX_DEK_SOURCE) throw new Error(`failed to rotate DEK uid=${uid}: encrypted seed of ${res.ciphertext.length} bytes`);
      this.metrics?.keyGenerated(Number(process.hrtime.bigint() - start) / 1e9, false);
      return res;
    } catch (err) {
      this.metrics?.keyGenerated(0, true);
      throw err;
    }
  }

  private async poll(): Promise<void> {
    // The validity counts from before the calls, so it never outlasts the bound it promises.
    const validUntil = Date.now() + this.timings.writeValidityMs;
    const status = await this.service.status();
    if (status.healthz !== 'ok') throw new Error(`got unexpected healthz status: ${status.healthz}`);
    if (status.version !== 'v2') throw new Error(`expected KMSv2 API version v2, got ${status.version}`);
    this.metrics?.statusKeyId(this.name, status.key_id, status.key_id === '' ? 'empty' : status.key_id.length > MAX_KEY_ID ? 'too_long' : undefined);
    validateKeyId(status.key_id);
    if (this.state && this.state.keyId === status.key_id) {
      this.state.validUntil = validUntil;
      return;
    }
    const seed = randomBytes(32);
    const uid = randomUUID();
    const res = await this.generated(uid, status.key_id, this.service.encrypt(seed, uid));
    const previous = this.state?.keyId;
    this.state = { seed, keyId: res.key_id, encryptedSeed: res.ciphertext, annotations: res.annotations, validUntil };
    this.remember(cacheKey({ encryptedData: Buffer.of(0), keyID: res.key_id, encryptedDEKSource: res.ciphertext, annotations: res.annotations, encryptedDEKSourceType: SEED_SOURCE }), seed, SEED_SOURCE);
    this.logger.info({ provider: this.name, uid, keyIdHash: sha256Hex(res.key_id), previousKeyIdHash: previous && sha256Hex(previous) }, 'KMS provider generated a new data encryption key seed');
  }
}
