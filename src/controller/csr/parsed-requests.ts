/**
 * The approver and the signer read the same `spec.request` within moments of each other: this
 * bounded memo lets the second one reuse the first one's parse instead of decoding base64, PEM and
 * PKCS#10 again. It holds parses made WITHOUT signature verification (the approver's kind), so a
 * signer still verifies the signature of every request it signs (verifyCertificateRequestSignature).
 * Keyed by the base64 text itself: equal text means equal bytes means an equal parse. Failures are
 * not kept (they are rare and each caller reports its own way).
 */
import { parseCertificateRequestPem, type ParsedCsr } from '../../pki/csr.js';
import { BoundedMap } from '../../lib/bounded-map.js';

/** Default bound: a backlog of CSRs approved but not yet signed rarely exceeds this. */
const DEFAULT_MAX_ENTRIES = 512;

export class ParsedRequests {
  private readonly entries: BoundedMap<string, Readonly<ParsedCsr>>;

  constructor(maxEntries = DEFAULT_MAX_ENTRIES) {
    this.entries = new BoundedMap(maxEntries);
  }

  /**
   * The request parsed from `spec.request` (base64 of PEM), signature NOT verified. Throws the
   * parser's PkiError when it does not parse. Callers must not mutate the result (it is shared).
   */
  parse(request: string | undefined): Readonly<ParsedCsr> {
    const text = request ?? '';
    const hit = this.entries.get(text);
    if (hit) return hit;
    const parsed = parseCertificateRequestPem(Buffer.from(text, 'base64').toString('latin1'), { verifySignature: false });
    this.entries.set(text, parsed);
    return parsed;
  }

  /** Entries held (for tests). */
  get size(): number {
    return this.entries.size;
  }
}
