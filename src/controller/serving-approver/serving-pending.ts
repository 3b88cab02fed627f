/**
 * Which serving CSRs are pending, per requester, kept up to date from the CSR informer's events:
 * the flood guard ranks a CSR among its node's pending ones, and a Node appearing or changing
 * re-queues exactly its node's pending CSRs, without scanning every cached CSR.
 */
import { SIGNER_KUBELET_SERVING, type CertificateSigningRequest } from '../../api/certificates.js';
import { hasCertificate, isDecided } from '../csr/csr-conditions.js';

/** Serving CSRs the serving approver may still decide: not issued, neither approved nor denied. */
export function servingSkips(csr: CertificateSigningRequest): boolean {
  return csr.spec.signerName !== SIGNER_KUBELET_SERVING || hasCertificate(csr) || isDecided(csr);
}

interface Entry {
  created: string;
  name: string;
}

export class PendingServing {
  private readonly byRequester = new Map<string, Map<string, Entry>>();
  private readonly requesterOf = new Map<string, string>();

  /** Records the CSR's current state under `key` (an event's object, or the cache's). */
  observe(key: string, csr: CertificateSigningRequest): void {
    this.forget(key);
    if (servingSkips(csr)) return;
    const requester = csr.spec.username ?? '';
    let entries = this.byRequester.get(requester);
    if (!entries) this.byRequester.set(requester, (entries = new Map()));
    entries.set(key, { created: csr.metadata?.creationTimestamp ?? '', name: csr.metadata?.name ?? key });
    this.requesterOf.set(key, requester);
  }

  forget(key: string): void {
    const requester = this.requesterOf.get(key);
    if (requester === undefined) return;
    this.requesterOf.delete(key);
    const entries = this.byRequester.get(requester);
    entries?.delete(key);
    if (entries?.size === 0) this.byRequester.delete(requester);
  }

  /** The pending keys of one requester. */
  keysOf(requester: string): string[] {
    return [...(this.byRequester.get(requester)?.keys() ?? [])];
  }

  /** How many of the requester's pending CSRs are older (creation time, then name) than `key`. */
  rank(requester: string, key: string): number {
    const entries = this.byRequester.get(requester);
    const me = entries?.get(key);
    if (!entries || !me) return 0;
    let older = 0;
    for (const [k, e] of entries) {
      if (k !== key && (e.created < me.created || (e.created === me.created && e.name < me.name))) older++;
    }
    return older;
  }
}
