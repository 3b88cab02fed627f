/**
 * The local encryption providers of an EncryptionConfiguration, with kube-apiserver's on-disk
 * forms, so a value one writes the other reads:
 *
 * - `aescbc`:    `k8s:enc:aescbc:v1:<key>:`    + 16-byte IV + AES-CBC ciphertext with PKCS#7 padding
 * - `aesgcm`:    `k8s:enc:aesgcm:v1:<key>:`    + 12-byte nonce + AES-GCM ciphertext + 16-byte tag;
 *                the additional data is the value's storage key (on etcd, the etcd key), as upstream,
 *                so a value copied under another key does not decrypt
 * - `secretbox`: `k8s:enc:secretbox:v1:<key>:` + 24-byte nonce + NaCl secretbox (tag, then XSalsa20 ciphertext)
 * - `identity`:  the value itself; reading refuses a value that carries `k8s:enc:`
 *
 * Writes use a provider's first key; reads try every key whose name the value names.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { secretbox } from '@noble/ciphers/salsa.js';
import { ENCRYPTED_PREFIX } from '../storage/value-transformer.js';
import type { EncryptionKey } from './config.js';

/** One provider of a resource's list, as upstream's PrefixTransformer. */
export interface Provider {
  /** `k8s:enc:aescbc:v1:` and so on; `identity` for the identity provider (the metrics' transformer_prefix). */
  readonly label: string;
  /** The stored value, prefix included. */
  seal(data: Uint8Array, authenticatedData: string): Uint8Array;
  /** The plaintext; undefined when `data` is not this provider's (its prefix does not match). */
  open(data: Uint8Array, authenticatedData: string): Uint8Array | Promise<Uint8Array> | undefined;
  /** Whether `data` is what `seal` writes now: this provider, its current key. */
  isCurrent(data: Uint8Array): boolean;
}

const GCM_NONCE = 12;
const TAG = 16;
const CBC_BLOCK = 16;
const SECRETBOX_NONCE = 24;

type Cipher = {
  seal(key: Buffer, data: Uint8Array, ad: string): Uint8Array;
  open(key: Buffer, data: Uint8Array, ad: string): Uint8Array;
};

function aesName(mode: 'cbc' | 'gcm', key: Buffer): 'aes-128-cbc' | 'aes-192-cbc' | 'aes-256-cbc' | 'aes-128-gcm' | 'aes-192-gcm' | 'aes-256-gcm' {
  return `aes-${key.length * 8}-${mode}` as ReturnType<typeof aesName>;
}

/** AES-GCM with a random 96-bit nonce; also the DEK cipher of KMS v2. */
export function gcmSeal(key: Buffer, data: Uint8Array, ad: string): Buffer {
  const nonce = randomBytes(GCM_NONCE);
  const cipher = createCipheriv(aesName('gcm', key) as 'aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(ad));
  const body = Buffer.concat([cipher.update(data), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

export function gcmOpen(key: Buffer, data: Uint8Array, ad: string): Buffer {
  if (data.length < GCM_NONCE + TAG) throw new Error('the stored data was shorter than the required size');
  const decipher = createDecipheriv(aesName('gcm', key) as 'aes-256-gcm', key, data.subarray(0, GCM_NONCE));
  decipher.setAAD(Buffer.from(ad));
  decipher.setAuthTag(data.subarray(data.length - TAG));
  return Buffer.concat([decipher.update(data.subarray(GCM_NONCE, data.length - TAG)), decipher.final()]);
}

const CIPHERS: Record<'aescbc' | 'aesgcm' | 'secretbox', Cipher> = {
  aescbc: {
    // Node's default padding is PKCS#7, as upstream's.
    seal(key, data) {
      const iv = randomBytes(CBC_BLOCK);
      const cipher = createCipheriv(aesName('cbc', key) as 'aes-256-cbc', key, iv);
      return Buffer.concat([iv, cipher.update(data), cipher.final()]);
    },
    open(key, data) {
      if (data.length < CBC_BLOCK) throw new Error('the stored data was shorter than the required size');
      if ((data.length - CBC_BLOCK) % CBC_BLOCK !== 0) throw new Error('the stored data is not a multiple of the block size');
      const decipher = createDecipheriv(aesName('cbc', key) as 'aes-256-cbc', key, data.subarray(0, CBC_BLOCK));
      return Buffer.concat([decipher.update(data.subarray(CBC_BLOCK)), decipher.final()]);
    },
  },
  aesgcm: { seal: gcmSeal, open: gcmOpen },
  secretbox: {
    seal(key, data) {
      const nonce = randomBytes(SECRETBOX_NONCE);
      return Buffer.concat([nonce, secretbox(key, nonce).seal(data)]);
    },
    open(key, data) {
      if (data.length < SECRETBOX_NONCE) throw new Error('the stored data was shorter than the required size');
      return secretbox(key, data.subarray(0, SECRETBOX_NONCE)).open(data.subarray(SECRETBOX_NONCE));
    },
  },
};

function startsWith(data: Uint8Array, prefix: Buffer): boolean {
  return data.length >= prefix.length && Buffer.compare(data.subarray(0, prefix.length), prefix) === 0;
}

/** aescbc, aesgcm or secretbox over its keys: `k8s:enc:<type>:v1:<key name>:<ciphertext>`. */
export function keyedProvider(type: 'aescbc' | 'aesgcm' | 'secretbox', keys: EncryptionKey[]): Provider {
  const label = `${ENCRYPTED_PREFIX}${type}:v1:`;
  const cipher = CIPHERS[type];
  const prefixed = keys.map((k) => ({ prefix: Buffer.from(`${label}${k.name}:`), secret: k.secret }));
  const writer = prefixed[0]!;
  return {
    label,
    seal: (data, ad) => Buffer.concat([writer.prefix, cipher.seal(writer.secret, data, ad)]),
    isCurrent: (data) => startsWith(data, writer.prefix),
    open(data, ad) {
      const errors: string[] = [];
      let matched = false;
      // Two keys may share a name (a key being replaced): the one that decrypts wins, as upstream.
      for (const key of prefixed) {
        if (!startsWith(data, key.prefix)) continue;
        matched = true;
        try {
          return cipher.open(key.secret, data.subarray(key.prefix.length), ad);
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
      if (!matched) return startsWith(data, Buffer.from(label)) ? failed(`no matching key was found for the provided ${type} transformer`) : undefined;
      return failed(`${type}: ${errors.join('; ')}`);
    },
  };
}

function failed(message: string): never {
  throw new Error(message);
}

const ENCRYPTED = Buffer.from(ENCRYPTED_PREFIX);

/** Plain values: written as they are; a value carrying `k8s:enc:` is not its to read. */
export const identityProvider: Provider = {
  label: 'identity',
  seal: (data) => data,
  open: (data) => (startsWith(data, ENCRYPTED) ? undefined : data),
  isCurrent: (data) => !startsWith(data, ENCRYPTED),
};
