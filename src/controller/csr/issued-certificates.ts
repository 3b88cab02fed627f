/**
 * The expiry of certificates this controller has just issued, by the status.certificate text it
 * wrote. The CSR cache keeps only a certificate's notAfter (csr-cache-transform.ts), and reading it
 * from the watch event's copy means decoding base64, PEM and the certificate's DER (~15 µs, more
 * than the event's JSON.parse): the signer knows it already. Equal text means an equal certificate,
 * so a hit is exact; anything else (another signer's certificate, a restart, an evicted entry) is
 * read from the certificate as before. Each entry is used once.
 */
import { BoundedMap } from '../../lib/bounded-map.js';

/** A backlog of certificates written but not yet seen on the watch rarely exceeds this. */
const DEFAULT_MAX_ENTRIES = 512;

export class IssuedCertificates {
  private readonly entries: BoundedMap<string, number>;

  constructor(maxEntries = DEFAULT_MAX_ENTRIES) {
    this.entries = new BoundedMap(maxEntries);
  }

  /** Before the write: the watch can deliver the issued CSR before the write's reply. */
  remember(certificate: string, notAfter: Date): void {
    // The certificate holds whole seconds (pki/der.ts `time`), which is what a parse of it gives.
    this.entries.set(certificate, Math.floor(notAfter.getTime() / 1000) * 1000);
  }

  /** The notAfter (ms) remembered for this text, forgotten once read; undefined when unknown. */
  take(certificate: string): number | undefined {
    const notAfter = this.entries.get(certificate);
    if (notAfter !== undefined) this.entries.delete(certificate);
    return notAfter;
  }
}
