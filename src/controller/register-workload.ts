/**
 * Registration of the workload signer (register.ts calls it when --workload-signer-names is set):
 * a PodCertificateRequest informer over every namespace, in the version the server serves (v1
 * where served, else v1beta1, found once at start), feeding the signer's rate-limited queue with
 * the requests addressed to its signer names. Its CA is published with the CSR signers' (revision
 * history, trust bundle ConfigMap, one ClusterTrustBundle per signer name), and a new revision (a
 * rotated CA) gives the requests still waiting another try.
 */
import { CERTIFICATES_GROUP } from '../api/certificates.js';
import type { KObject } from '../api/meta.js';
import { isNotFound } from '../lib/api-errors.js';
import type { Logger } from '../log/logger.js';
import { PodCertificateMetrics } from '../metrics/pod-certificates.js';
import type { CaSignerSource } from '../pki/ca.js';
import { PCR_RESOURCE, PCR_VERSIONS, type PcrKeyType, type PcrVersion, type PodCertificateRequestV1beta1 } from '../api/pod-certificates.js';
import type { ControllerConfig } from '../config/schema.js';
import { parsePodKeyTypes, workloadSignerNames } from '../config/workload-signer.js';
import type { KubeClient } from './client/kube-client.js';
import { keyOf } from './informer/cache.js';
import type { Informer } from './informer/informer.js';
import type { CsrControllerContext } from './register.js';
import type { RevisionSigner } from './revisions/revisions.js';
import { watch } from './runtime/manager.js';
import type { CaFiles } from './signer/ca-source.js';
import { WORKLOAD_SIGNER_NAME, WorkloadSignerReconciler, workloadSignerSkips } from './workload-signer/workload-signer.js';

export type PodCertificateVersion = PcrVersion;

/** The workload signer's configuration, or undefined when it is off. */
export interface WorkloadSignerPlan {
  signerNames: string[];
  files: CaFiles;
  trustDomain: string;
  keyTypes: PcrKeyType[];
  maxDurationMs: number;
}

export function workloadSignerPlan(config: ControllerConfig): WorkloadSignerPlan | undefined {
  const signerNames = workloadSignerNames(config.workloadSignerNames);
  if (signerNames.length === 0) return undefined;
  return {
    signerNames,
    files: { certFile: config.workloadSignerCertFile, keyFile: config.workloadSignerKeyFile },
    trustDomain: config.workloadSignerTrustDomain,
    keyTypes: parsePodKeyTypes(config.workloadSignerKeyTypes),
    maxDurationMs: config.workloadSignerMaxDuration,
  };
}

/** Each signer name as the revision keeper records and publishes it; the policy names the trust domain and key types. */
export function workloadRevisionSigners(plan: WorkloadSignerPlan, ca: CaSignerSource): RevisionSigner[] {
  const policy = `spiffe trust-domain=${plan.trustDomain} key-types=${plan.keyTypes.join(',')}`;
  return plan.signerNames.map((signerName) => ({ signerName, policy, ca, maxDurationMs: plan.maxDurationMs }));
}

/**
 * The PodCertificateRequest version to read, newest first; undefined when the server serves none
 * (an older cluster, or the feature gate off): the signer and the PCR cleaner then stay off, as said. Any other
 * error stops the start, as an unreachable server would.
 */
export async function servedPodCertificateVersion(client: Pick<KubeClient, 'requestJSON'>, logger: Logger): Promise<PodCertificateVersion | undefined> {
  for (const version of PCR_VERSIONS) {
    try {
      const list = await client.requestJSON<{ resources?: { name: string }[] }>('GET', `/apis/${CERTIFICATES_GROUP}/${version}`);
      if (list.resources?.some((r) => r.name === PCR_RESOURCE)) return version;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  logger.warn({ versions: PCR_VERSIONS }, 'PodCertificateRequests not served: the workload signer and the PodCertificateRequest cleaner stay off');
  return undefined;
}

export function addWorkloadSigner(ctx: CsrControllerContext, plan: WorkloadSignerPlan, version: PodCertificateVersion, ca: CaSignerSource, revisions: Informer<KObject>): void {
  const pcrInformer = ctx.mgr.informer<PodCertificateRequestV1beta1>({
    name: PCR_RESOURCE,
    resource: { group: CERTIFICATES_GROUP, version, plural: PCR_RESOURCE },
  });
  const signerNames = new Set(plan.signerNames);
  const pcrs = pcrInformer.store;
  const pending = (): string[] => pcrs.list().filter((p) => !workloadSignerSkips(p, signerNames)).map((p) => keyOf(p));
  ctx.mgr.addController({
    name: WORKLOAD_SIGNER_NAME,
    workers: ctx.config.signerWorkers,
    rateLimiter: ctx.rateLimiter,
    reconciler: new WorkloadSignerReconciler({
      signerNames,
      trustDomain: plan.trustDomain,
      ca,
      maxDurationMs: plan.maxDurationMs,
      keyTypes: new Set(plan.keyTypes),
      pcrs,
      client: ctx.client,
      events: ctx.deps(WORKLOAD_SIGNER_NAME).events,
      metrics: PodCertificateMetrics.for(ctx.registry),
      clock: ctx.clock,
    }),
    watches: [watch(pcrInformer, (pcr) => (workloadSignerSkips(pcr, signerNames) ? [] : [keyOf(pcr)])), watch(revisions, pending)],
  });
}
