/**
 * csrsigning-*: one controller per signer (upstream's split), each with its own CA and pre-sign
 * check. It signs only CSRs that are approved, not denied, not Failed and not issued; a request that
 * fails the signer's policy or cannot be parsed becomes Failed (terminal, never retried); anything
 * transient (CA unreadable or expired, API errors) is retried with backoff and never marks Failed.
 * It decides on the informer's copy, as upstream's controllers do, and the certificate is written
 * by PUT /status carrying that copy's resourceVersion: a copy that is stale (another process, or
 * this one before a restart, wrote meanwhile) gets 409 and is requeued, so no CSR is ever issued
 * twice, and no GET precedes the write.
 */
import { CONDITION_FAILED, type CertificateSigningRequest } from '../../api/certificates.js';
import type { CaSignerSource } from '../../pki/ca.js';
import { verifyCertificateRequestSignature, type ParsedCsr } from '../../pki/csr.js';
import { PkiError } from '../../pki/errors.js';
import { certificateLifetime, issueCertificateDer } from '../../pki/issue.js';
import { encodePem } from '../../pki/pem.js';
import { keyPolicyError, type KeyPolicy } from '../../pki/public-key.js';
import { wrapError } from '../client/errors.js';
import type { ReconcileContext, Reconciler, Result } from '../runtime/reconcile.js';
import { hasCertificate, isApproved, isFailed } from '../csr/csr-conditions.js';
import type { CsrReconcilerDeps } from '../csr/csr-deps.js';
import type { SignerPolicy } from './signer-policy.js';

export const FAILED_REASON = 'SignerValidationFailure';
export const ISSUED_EVENT_REASON = 'CertificateIssued';
/** The `reason` label of kube_identity_csr_failures_total: why a signer marked a CSR Failed. */
const FAILURE_REASONS = ['unparseable', 'policy', 'key-policy'] as const;

export interface SignerOptions extends CsrReconcilerDeps {
  policy: SignerPolicy;
  ca: CaSignerSource;
  /** Maximum certificate lifetime in ms (--cluster-signing-duration). */
  maxDurationMs: number;
  /** Which public keys any signer issues for (--signer-min-rsa-bits; fixed curves). */
  keyPolicy: KeyPolicy;
}

/** True when this signer has nothing to do with the CSR (upstream's base-controller and handler skips). */
export function signerSkips(csr: CertificateSigningRequest, signerName: string): boolean {
  return csr.spec.signerName !== signerName || hasCertificate(csr) || !isApproved(csr) || isFailed(csr);
}

export class SignerReconciler implements Reconciler {
  private readonly signerName: string;
  /** The CA expiry last given to the metric (ms). */
  private caNotAfter = Number.NaN;

  constructor(private readonly o: SignerOptions) {
    this.signerName = o.policy.signerName;
    o.metrics.initSigner(this.signerName, FAILURE_REASONS);
  }

  async reconcile(key: string, ctx: ReconcileContext): Promise<Result> {
    // Decided on the informer's copy; /status carries its resourceVersion (see the header).
    const csr = this.o.csrs.get(key);
    if (!csr || signerSkips(csr, this.signerName)) return 'done';
    const usages = csr.spec.usages ?? [];
    let parsed: Readonly<ParsedCsr>;
    try {
      parsed = this.o.requests.parse(csr.spec.request);
      // As upstream's signer: the self-signature is checked before anything is signed, every time.
      verifyCertificateRequestSignature(parsed);
    } catch (err) {
      if (!(err instanceof PkiError)) throw err;
      // The request is immutable: no retry can make it parse, so it is terminal.
      await this.fail(csr, `unable to parse csr "${key}": ${err.message}`, 'unparseable', ctx);
      return 'done';
    }
    // Beyond upstream: a key we would not sign for ends the request (Failed), never leaves it pending.
    const weakKey = keyPolicyError(parsed.publicKeyDer, this.o.keyPolicy);
    if (weakKey !== undefined) {
      await this.fail(csr, weakKey, 'key-policy', ctx);
      return 'done';
    }
    const refusal = this.o.policy.check(parsed, usages);
    if (refusal !== undefined) {
      await this.fail(csr, refusal, 'policy', ctx);
      return 'done';
    }
    const { pem, notAfter } = this.sign(csr, parsed, usages);
    const certificate = Buffer.from(pem, 'latin1').toString('base64');
    this.o.issued?.remember(certificate, notAfter);
    const updated: CertificateSigningRequest = { ...csr, status: { ...csr.status, certificate } };
    try {
      await this.o.api.putStatus(updated);
    } catch (err) {
      throw wrapError('error updating signature for csr', err);
    }
    this.recordIssued(updated, ctx);
    return 'done';
  }

  /** Signs; every failure here is transient from the CSR's point of view (CA files, CA expiry). */
  private sign(csr: CertificateSigningRequest, parsed: Readonly<ParsedCsr>, usages: string[]): { pem: string; notAfter: Date } {
    try {
      const ca = this.o.ca.signer();
      const caNotAfter = ca.notAfter.getTime();
      if (caNotAfter !== this.caNotAfter) {
        // Set when it changes (a rotated CA), not on every certificate: each set hashes its labels.
        this.o.metrics.caExpiry.set({ signer: this.signerName }, caNotAfter / 1000);
        this.caNotAfter = caNotAfter;
      }
      const { notBefore, notAfter } = certificateLifetime({
        now: new Date(this.o.clock.now()),
        caNotAfter: ca.notAfter,
        maxDuration: this.o.maxDurationMs,
        expirationSeconds: csr.spec.expirationSeconds,
      });
      const der = issueCertificateDer(ca, {
        subject: parsed.subject,
        publicKeyDer: parsed.publicKeyDer,
        dnsNames: parsed.dnsNames,
        ipAddresses: parsed.ipAddresses,
        emailAddresses: parsed.emailAddresses,
        uris: parsed.uris,
        usages,
        notBefore,
        notAfter,
      });
      return { pem: encodePem('CERTIFICATE', der), notAfter };
    } catch (err) {
      throw wrapError('error auto signing csr', err);
    }
  }

  private async fail(csr: CertificateSigningRequest, message: string, why: (typeof FAILURE_REASONS)[number], ctx: ReconcileContext): Promise<void> {
    const conditions = [...(csr.status?.conditions ?? [])];
    conditions.push({ type: CONDITION_FAILED, status: 'True', reason: FAILED_REASON, message, lastUpdateTime: new Date(this.o.clock.now()).toISOString() });
    const updated: CertificateSigningRequest = { ...csr, status: { ...csr.status, conditions } };
    try {
      await this.o.api.putStatus(updated);
    } catch (err) {
      throw wrapError('error adding failure condition for csr', err);
    }
    this.o.metrics.failures.inc({ signer: this.signerName, reason: why });
    ctx.logger.info({ csr: csr.metadata?.name, signer: this.signerName, decision: 'failed', reason: why, message }, 'csr marked failed');
    this.o.events.event(updated, 'Warning', FAILED_REASON, 'Sign', message);
  }

  private recordIssued(csr: CertificateSigningRequest, ctx: ReconcileContext): void {
    const created = Date.parse(csr.metadata?.creationTimestamp ?? '');
    this.o.metrics.issued(this.signerName, Number.isFinite(created) ? Math.max(0, (this.o.clock.now() - created) / 1000) : undefined);
    ctx.logger.info({ csr: csr.metadata?.name, signer: this.signerName, decision: 'issued' }, 'certificate issued');
    this.o.events.event(csr, 'Normal', ISSUED_EVENT_REASON, 'Sign', `Certificate issued by signer ${this.signerName}`);
  }
}
