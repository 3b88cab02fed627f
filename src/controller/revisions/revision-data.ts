/**
 * The signer configuration as recorded in ControllerRevisions, and what follows from the history:
 * pure functions over plain data, so the revision controller only reads, asks these, and writes.
 * The revision name is `<prefix>-<hash of data>`, so the same configuration always maps to the same
 * name (a rollback reuses the old object) and a changed one never overwrites history.
 */
import { createHash } from 'node:crypto';
import type { KObject } from '../../api/meta.js';
import { certificateDers, readCertificateInfo } from '../../pki/certificate.js';

/** One signer's effective configuration. */
export interface SignerRecord {
  signerName: string;
  /** SHA-256 of the CA certificate DER, lower-case hex. */
  caFingerprintSha256: string;
  /** The CA certificate, PEM. */
  caCertificate: string;
  maxDurationSeconds: number;
  policy: string;
}

export interface SignerRevisionData {
  signers: SignerRecord[];
}

export function fingerprintOf(certDer: Uint8Array): string {
  return createHash('sha256').update(certDer).digest('hex');
}

/** Canonical form: signers sorted by name, fields in a fixed order. */
export function canonicalData(signers: readonly SignerRecord[]): SignerRevisionData {
  const sorted = [...signers].sort((a, b) => (a.signerName < b.signerName ? -1 : a.signerName > b.signerName ? 1 : 0));
  return {
    signers: sorted.map((s) => ({
      signerName: s.signerName,
      caFingerprintSha256: s.caFingerprintSha256,
      caCertificate: s.caCertificate,
      maxDurationSeconds: s.maxDurationSeconds,
      policy: s.policy,
    })),
  };
}

/** `<prefix>-<first 10 hex digits of SHA-256 of the canonical JSON>`. */
export function revisionName(prefix: string, data: SignerRevisionData): string {
  return `${prefix}-${createHash('sha256').update(JSON.stringify(data)).digest('hex').slice(0, 10)}`;
}

/** The data of a stored revision, when it has the expected shape. */
export function dataOf(rev: KObject): SignerRevisionData | undefined {
  const d = rev.data as { signers?: unknown } | undefined;
  return d && Array.isArray(d.signers) ? (d as SignerRevisionData) : undefined;
}

export const revisionOf = (rev: KObject): number => (typeof rev.revision === 'number' ? rev.revision : 0);

/** Newest first. */
export function byRevisionDesc(revs: readonly KObject[]): KObject[] {
  return [...revs].sort((a, b) => revisionOf(b) - revisionOf(a));
}

/** The revisions beyond the newest `limit`, which pruning deletes (never the current one). */
export function revisionsToPrune(revs: readonly KObject[], limit: number, currentName: string): KObject[] {
  return byRevisionDesc(revs)
    .filter((r) => r.metadata?.name !== currentName)
    .slice(Math.max(0, limit - 1));
}

function notExpired(pem: string, now: number): boolean {
  try {
    const [der] = certificateDers(pem);
    return der !== undefined && readCertificateInfo(der).notAfter.getTime() > now;
  } catch {
    return false;
  }
}

/**
 * Each signer's trust bundle: its current CA first, then previous CAs from the history (newest
 * first) that have not expired, each certificate once. Keyed by signer name.
 */
export function trustBundles(current: SignerRevisionData, history: readonly KObject[], now: number): Map<string, string> {
  const out = new Map<string, string>();
  const older = byRevisionDesc(history).map(dataOf).filter((d): d is SignerRevisionData => d !== undefined);
  for (const signer of current.signers) {
    const seen = new Set([signer.caFingerprintSha256]);
    const pems = [signer.caCertificate.trim()];
    for (const d of older) {
      const prev = d.signers.find((s) => s.signerName === signer.signerName);
      if (!prev || seen.has(prev.caFingerprintSha256) || !notExpired(prev.caCertificate, now)) continue;
      seen.add(prev.caFingerprintSha256);
      pems.push(prev.caCertificate.trim());
    }
    out.set(signer.signerName, `${pems.join('\n')}\n`);
  }
  return out;
}

/** ConfigMap keys allow [-._a-zA-Z0-9]: `kubernetes.io/kubelet-serving` → `kubernetes.io_kubelet-serving.crt`. */
export function bundleKey(signerName: string): string {
  return `${signerName.replace(/[^-._a-zA-Z0-9]/g, '_')}.crt`;
}
