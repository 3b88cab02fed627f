/**
 * The seam between the stores and encryption at rest (kube-apiserver's value.Transformer): a store
 * hands each value it writes to `toStorage` and each value it reads to `fromStorage`, for the keys
 * the transformer claims. Values under other keys are stored as they are, at no cost.
 *
 * `toStorage` is synchronous (every provider encrypts with a key it holds, KMS v2 included: its
 * DEK is made ahead of the writes), so a store's write path keeps its order and its commit
 * grouping; `fromStorage` may need the KMS plugin to decrypt a DEK it has not seen yet, so it may
 * answer with a promise. Both throw StoreError 'Unavailable' (503) when a KMS plugin is needed and
 * cannot be reached.
 */
export interface KeyTransformer {
  /** The value to store for `data`; `authenticatedData` binds it to its key (the AEAD's additional data). */
  toStorage(data: Uint8Array, authenticatedData: string): Uint8Array;
  fromStorage(data: Uint8Array, authenticatedData: string): Uint8Array | Promise<Uint8Array>;
  /** Whether `data` (a stored value) was stored otherwise than `toStorage` would store it now. */
  isStale(data: Uint8Array): boolean;
}

export interface ValueTransformer {
  /**
   * The transformer of the values under `key` (a Store key, or a collection prefix for a watch), or
   * undefined when they are stored untransformed.
   */
  forKey(key: string): KeyTransformer | undefined;
}

/** Every transformed value starts with this, as kube-apiserver's do (`k8s:enc:aescbc:v1:key1:`). */
export const ENCRYPTED_PREFIX = 'k8s:enc:';

/**
 * A value read under a key no transformer claims: it must be plain (an encrypted one means its
 * resource was dropped from the encryption configuration, which upstream's identity reader refuses too).
 */
export function assertPlain(data: Uint8Array | string, key: string): void {
  if (data.length < ENCRYPTED_PREFIX.length) return;
  for (let i = 0; i < ENCRYPTED_PREFIX.length; i++) {
    const c = typeof data === 'string' ? data.charCodeAt(i) : data[i];
    if (c !== ENCRYPTED_PREFIX.charCodeAt(i)) return;
  }
  throw new Error(`${key}: identity transformer tried to read encrypted data (is its resource missing from the encryption configuration?)`);
}
