import { BOOLEAN_TRUE, bitString, octetString, oid, seq } from './der.js';
import { PkiError } from './errors.js';
import { KEY_USAGES } from '../api/certificates.js';

/** The 23 key usage strings of certificates.k8s.io/v1, defined once with the API types. */
export { KEY_USAGES };

export type KnownKeyUsage = (typeof KEY_USAGES)[number];
/** A usage string as found in a CSR spec; anything outside KEY_USAGES fails at signing time. */
export type KeyUsage = KnownKeyUsage | (string & Record<never, never>);

/** X.509 KeyUsage bit numbers (RFC 5280 4.2.1.3). */
const KEY_USAGE_BITS: Partial<Record<KnownKeyUsage, number>> = {
  signing: 0,
  'digital signature': 0,
  'content commitment': 1,
  'key encipherment': 2,
  'data encipherment': 3,
  'key agreement': 4,
  'cert sign': 5,
  'crl sign': 6,
  'encipher only': 7,
  'decipher only': 8,
};

/** ExtKeyUsage OIDs in Go's x509.ExtKeyUsage enum order, which is the order they are emitted in. */
const EXT_KEY_USAGE_ORDER = [
  '2.5.29.37.0',
  '1.3.6.1.5.5.7.3.1',
  '1.3.6.1.5.5.7.3.2',
  '1.3.6.1.5.5.7.3.3',
  '1.3.6.1.5.5.7.3.4',
  '1.3.6.1.5.5.7.3.5',
  '1.3.6.1.5.5.7.3.6',
  '1.3.6.1.5.5.7.3.7',
  '1.3.6.1.5.5.7.3.8',
  '1.3.6.1.5.5.7.3.9',
  '1.3.6.1.4.1.311.10.3.3',
  '2.16.840.1.113730.4.1',
] as const;

const EXT_KEY_USAGES: Partial<Record<KnownKeyUsage, (typeof EXT_KEY_USAGE_ORDER)[number]>> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

const KNOWN = new Set<string>(KEY_USAGES);

export function isKnownKeyUsage(u: string): u is KnownKeyUsage {
  return KNOWN.has(u);
}

/** The x509 meaning of a usage list: OR-ed KeyUsage bits and de-duplicated, ordered ExtKeyUsage OIDs. */
export function mapUsages(usages: readonly string[]): { keyUsageBits: number; extKeyUsages: string[] } {
  const unknown = usages.filter((u) => !isKnownKeyUsage(u));
  if (unknown.length) {
    throw new PkiError(`unrecognized usage values: [${unknown.map((u) => JSON.stringify(u)).join(' ')}]`, 'usage');
  }
  let keyUsageBits = 0;
  const ext = new Set<string>();
  for (const u of usages as readonly KnownKeyUsage[]) {
    const bit = KEY_USAGE_BITS[u];
    if (bit !== undefined) keyUsageBits |= 1 << bit;
    const e = EXT_KEY_USAGES[u];
    if (e) ext.add(e);
  }
  return { keyUsageBits, extKeyUsages: EXT_KEY_USAGE_ORDER.filter((o) => ext.has(o)) };
}

/** KeyUsage as a DER named BIT STRING: bit 0 is the MSB of the first byte, trailing zero bits dropped. */
function keyUsageBitString(bits: number): Buffer {
  const bytes = [0, 0];
  let last = -1;
  for (let i = 0; i < 9; i++) {
    if (bits & (1 << i)) {
      bytes[i >> 3] = (bytes[i >> 3] as number) | (0x80 >> (i & 7));
      last = i;
    }
  }
  const len = (last >> 3) + 1;
  return bitString(Buffer.from(bytes.slice(0, len)), len * 8 - 1 - last);
}

const cache = new Map<string, Buffer[]>();

/**
 * The KeyUsage (critical, omitted when no bit is set) and ExtKeyUsage extensions for `usages`.
 * Memoised: controllers see a handful of distinct usage lists.
 */
export function usageExtensions(usages: readonly string[]): Buffer[] {
  const key = usages.join('\0');
  const hit = cache.get(key);
  if (hit) return hit;
  const { keyUsageBits, extKeyUsages } = mapUsages(usages);
  const exts: Buffer[] = [];
  if (keyUsageBits) exts.push(seq(oid('2.5.29.15'), BOOLEAN_TRUE, octetString(keyUsageBitString(keyUsageBits))));
  if (extKeyUsages.length) exts.push(seq(oid('2.5.29.37'), octetString(seq(...extKeyUsages.map(oid)))));
  if (cache.size >= 256) cache.clear();
  cache.set(key, exts);
  return exts;
}
