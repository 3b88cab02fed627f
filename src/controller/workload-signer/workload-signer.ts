/**
 * The workload signer: issues PodCertificateRequests addressed to its signer names an X.509 SVID,
 * a certificate whose only name is the URI SAN spiffe://<trust domain>/ns/<namespace>/sa/<service
 * account>. The namespace is the request's own, the service account the one the API server bound
 * into its spec from the pod (NodeRestriction checks pod, service account and node UIDs), so the
 * identity is nothing the pod or its node could choose; the key is the only thing taken from the
 * requester's material. As the CSR signer: decided on the informer's copy, one PUT /status with that
 * copy's resourceVersion (a stale copy costs a 409, a requeue), never a GET first. Outcomes are
 * terminal conditions: Issued with the chain and its times; Denied (UnsupportedKeyType) for a key
 * type the policy refuses; Failed when the signer cannot sign at all (its CA ends within the hour).
 * An unreadable CA is transient: retried with backoff, never Failed.
 */
import { X509Certificate } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import type { PodCertificateMetrics } from '../../metrics/pod-certificates.js';
import type { CaSigner, CaSignerSource } from '../../pki/ca.js';
import { issueCertificateDer } from '../../pki/issue.js';
import { encodeName } from '../../pki/name.js';
import { encodePem } from '../../pki/pem.js';
import { pcrKeyVerdict } from '../../pki/pod-certificate-key.js';
import { serviceAccountSpiffeId } from '../../pki/spiffe.js';
import type { KubeClient } from '../client/kube-client.js';
import { wrapError } from '../client/errors.js';
import type { EventRecorder } from '../events/broadcaster.js';
import type { ReadonlyCache } from '../informer/cache.js';
import type { ReconcileContext, Reconciler, Result } from '../runtime/reconcile.js';
import {
  PCR_CONDITION_DENIED,
  PCR_CONDITION_FAILED,
  PCR_CONDITION_ISSUED,
  PCR_DEFAULT_MAX_EXPIRATION_SECONDS,
  PCR_REASON_UNSUPPORTED_KEY_TYPE,
  pcrIsTerminal,
  type PcrKeyType,
  type PodCertificateRequestCondition,
  type PodCertificateRequestStatus,
} from '../../api/pod-certificates.js';
import { pcrPath, requestedPublicKey, type CachedPodCertificateRequest } from './pod-certificate-request.js';
import { podCertificateTimes, rfc3339 } from './pod-lifetime.js';

export const WORKLOAD_SIGNER_NAME = 'workload-signer';
export const ISSUED_REASON = 'Issued';
export const FAILED_REASON = 'SignerFailure';
/** The `reason` label of kube_identity_pcr_failures_total. */
const FAILURE_REASONS = ['ca-expiring', 'identity'] as const;
/** What an X509-SVID may be used for: TLS either way (key encipherment only means something for RSA). */
const USAGES = ['digital signature', 'server auth', 'client auth'];
const RSA_USAGES = ['digital signature', 'key encipherment', 'server auth', 'client auth'];
const EMPTY_SUBJECT = { der: encodeName({}) };

export interface WorkloadSignerOptions {
  signerNames: ReadonlySet<string>;
  trustDomain: string;
  ca: CaSignerSource;
  /** The longest lifetime issued (--workload-signer-max-duration), in ms. */
  maxDurationMs: number;
  keyTypes: ReadonlySet<PcrKeyType>;
  /** The PodCertificateRequest informer's cache: the copy every decision is made on. */
  pcrs: ReadonlyCache<CachedPodCertificateRequest>;
  client: Pick<KubeClient, 'write'>;
  events: EventRecorder;
  metrics: PodCertificateMetrics;
  clock: Clock;
  /** [0, 1): where beginRefreshAt falls (tests pin it). */
  random?: () => number;
}

/** True when the signer has nothing to do with the request: another signer's, or already decided. */
export function workloadSignerSkips(pcr: Readonly<CachedPodCertificateRequest>, signerNames: ReadonlySet<string>): boolean {
  return !signerNames.has(pcr.spec?.signerName) || pcrIsTerminal(pcr);
}

export class WorkloadSignerReconciler implements Reconciler {
  constructor(private readonly o: WorkloadSignerOptions) {
    for (const signer of o.signerNames) o.metrics.initSigner(signer, [PCR_REASON_UNSUPPORTED_KEY_TYPE], FAILURE_REASONS);
  }

  async reconcile(key: string, ctx: ReconcileContext): Promise<Result> {
    const pcr = this.o.pcrs.get(key);
    if (!pcr || workloadSignerSkips(pcr, this.o.signerNames)) return 'done';
    await this.conclude(pcr, this.decide(pcr), ctx);
    return 'done';
  }

  /** What to answer, made on the cached copy; throws only for what a retry can cure (the CA unreadable). */
  private decide(pcr: Readonly<CachedPodCertificateRequest>): Outcome {
    const { spec } = pcr;
    const keyDer = readKey(spec);
    const keyType = keyDer && keyTypeOf(keyDer);
    if (!keyDer || !keyType || !this.o.keyTypes.has(keyType)) {
      const message = `signer ${spec.signerName} does not issue certificates for ${keyType ?? 'this key type'}; use one of ${[...this.o.keyTypes].join(', ')}`;
      return { type: PCR_CONDITION_DENIED, reason: PCR_REASON_UNSUPPORTED_KEY_TYPE, message };
    }
    let spiffeId: string;
    try {
      spiffeId = serviceAccountSpiffeId(this.o.trustDomain, pcr.metadata?.namespace ?? '', spec.serviceAccountName);
    } catch (err) {
      return { type: PCR_CONDITION_FAILED, reason: FAILED_REASON, message: (err as Error).message, failure: 'identity' };
    }
    let ca: CaSigner;
    try {
      ca = this.o.ca.signer();
    } catch (err) {
      throw wrapError('error loading the workload signer CA', err);
    }
    const times = podCertificateTimes({
      now: this.o.clock.now(),
      maxExpirationSeconds: spec.maxExpirationSeconds ?? PCR_DEFAULT_MAX_EXPIRATION_SECONDS,
      policyMaxMs: this.o.maxDurationMs,
      caNotAfter: ca.notAfter,
      jitter: (this.o.random ?? Math.random)(),
    });
    if ('refusal' in times) return { type: PCR_CONDITION_FAILED, reason: FAILED_REASON, message: times.refusal, failure: 'ca-expiring' };
    const leaf = issueCertificateDer(ca, {
      subject: EMPTY_SUBJECT,
      publicKeyDer: keyDer,
      uris: [spiffeId],
      usages: keyType.startsWith('RSA') ? RSA_USAGES : USAGES,
      notBefore: times.notBefore,
      notAfter: times.notAfter,
    });
    const issued: PodCertificateRequestStatus = {
      certificateChain: encodePem('CERTIFICATE', leaf) + intermediate(ca),
      notBefore: rfc3339(times.notBefore),
      beginRefreshAt: rfc3339(times.beginRefreshAt),
      notAfter: rfc3339(times.notAfter),
    };
    return { type: PCR_CONDITION_ISSUED, reason: ISSUED_REASON, message: `issued ${spiffeId} until ${issued.notAfter ?? ''}`, issued };
  }

  /** Writes the one terminal condition (and, for Issued, the chain and times) through /status, then records it. */
  private async conclude(pcr: Readonly<CachedPodCertificateRequest>, out: Outcome, ctx: ReconcileContext): Promise<void> {
    const condition: PodCertificateRequestCondition = {
      type: out.type,
      status: 'True',
      reason: out.reason,
      message: out.message,
      lastTransitionTime: rfc3339(new Date(this.o.clock.now())),
      observedGeneration: pcr.metadata?.generation,
    };
    const updated: CachedPodCertificateRequest = { ...pcr, status: { ...out.issued, conditions: [...(pcr.status?.conditions ?? []), condition] } };
    try {
      await this.o.client.write('PUT', `${pcrPath(pcr)}/status`, updated);
    } catch (err) {
      throw wrapError(`error writing the ${out.type} condition of the pod certificate request`, err);
    }
    const signer = pcr.spec.signerName;
    const fields = { podCertificateRequest: `${pcr.metadata?.namespace ?? ''}/${pcr.metadata?.name ?? ''}`, signer, pod: pcr.spec.podName, decision: out.type, reason: out.reason };
    if (out.issued) {
      this.o.metrics.issuances.inc({ signer });
      const created = Date.parse(pcr.metadata?.creationTimestamp ?? '');
      if (Number.isFinite(created)) this.o.metrics.issuanceLatency.observe({ signer }, Math.max(0, (this.o.clock.now() - created) / 1000));
      ctx.logger.info(fields, 'pod certificate issued');
      this.o.events.event(updated, 'Normal', out.reason, 'Sign', out.message);
      return;
    }
    if (out.failure) this.o.metrics.failures.inc({ signer, reason: out.failure });
    else this.o.metrics.denials.inc({ signer, reason: out.reason });
    ctx.logger.info({ ...fields, message: out.message }, 'pod certificate request refused');
    this.o.events.event(updated, 'Warning', out.reason, 'Sign', out.message);
  }
}

/** The terminal condition to write; `issued` for Issued, `failure` (the metric's reason) for Failed. */
interface Outcome {
  type: string;
  reason: string;
  message: string;
  failure?: (typeof FAILURE_REASONS)[number];
  issued?: PodCertificateRequestStatus;
}

/** One of the API's key types, or undefined for any other key (denied as an unsupported key type). */
function keyTypeOf(spki: Uint8Array): PcrKeyType | undefined {
  try {
    const verdict = pcrKeyVerdict(spki);
    return 'keyType' in verdict ? verdict.keyType : undefined;
  } catch {
    return undefined;
  }
}

/** The requested key, or undefined when the spec holds none that parses (denied as an unsupported key type). */
function readKey(spec: Readonly<CachedPodCertificateRequest['spec']>): Uint8Array | undefined {
  try {
    return requestedPublicKey(spec);
  } catch {
    return undefined;
  }
}

/** The chain after the leaf: the CA certificate when it is an intermediate (pods trust the root in the bundle), else nothing. */
const chainTails = new WeakMap<CaSigner, string>();
function intermediate(ca: CaSigner): string {
  let tail = chainTails.get(ca);
  if (tail === undefined) {
    const cert = new X509Certificate(Buffer.from(ca.certDer));
    tail = cert.checkIssued(cert) ? '' : encodePem('CERTIFICATE', ca.certDer);
    chainTails.set(ca, tail);
  }
  return tail;
}
