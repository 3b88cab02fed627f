/**
 * Registration of the workload signer (register.ts calls it when --workload-signer-names is set):
 * a PodCertificateRequest informer over every namespace, in the version the server serves (v1
 * where served, else v1beta1, found once at start, asked until the server answers), feeding the
 * signer's rate-limited queue with the requests addressed to its signer names. Its CA is published with the CSR signers' (revision
 * history, trust bundle ConfigMap, one ClusterTrustBundle per signer name), and a new revision (a
 * rotated CA) gives the requests still waiting another try.
 */
import { CERTIFICATES_GROUP } from '../api/certificates.js';
import type { KObject } from '../api/meta.js';
import { httpStatusOf, isNotFound, isRefused } from '../lib/api-errors.js';
import { sleep, type Clock } from '../lib/clock.js';
import type { Logger } from '../log/logger.js';
import { PodCertificateMetrics } from '../metrics/pod-certificates.js';
import type { CaSignerSource } from '../pki/ca.js';
import { PCR_RESOURCE, PCR_VERSIONS, type PcrKeyType, type PcrVersion, type PodCertificateRequestV1beta1 } from '../api/pod-certificates.js';
import type { ControllerConfig } from '../config/schema.js';
import { parsePodKeyTypes, workloadSignerNames } from '../config/workload-signer.js';
import { REFUSED_MESSAGE } from './client/errors.js';
import type { KubeClient } from './client/kube-client.js';
import { keyOf } from './informer/cache.js';
import type { Informer } from './informer/informer.js';
import type { CsrControllerContext } from './register.js';
import type { RevisionSigner } from './revisions/revisions.js';
import { JitteredBackoff } from '../lib/backoff.js';
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

/** The newest PodCertificateRequest version the server serves; undefined when both answer 404 or list none. */
async function discoverPodCertificateVersion(client: Pick<KubeClient, 'requestJSON'>, signal?: AbortSignal): Promise<PodCertificateVersion | undefined> {
  for (const version of PCR_VERSIONS) {
    try {
      const list = await client.requestJSON<{ resources?: { name: string }[] }>('GET', `/apis/${CERTIFICATES_GROUP}/${version}`, {}, signal);
      if (list.resources?.some((r) => r.name === PCR_RESOURCE)) return version;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return undefined;
}

/** How the start-up discovery waits between attempts, and when it gives up. */
export interface DiscoveryRetry {
  clock: Clock;
  /** The controller's stop: discovery ends (undefined) once it aborts. */
  signal?: AbortSignal;
  backoff?: JitteredBackoff;
}

/**
 * The PodCertificateRequest version to read, newest first; undefined when the server serves none
 * (an older cluster, or the feature gate off): the signer and the PCR cleaner then stay off, as
 * said, while the signer's CA is still published. A server that cannot be reached, or answers
 * anything but 404, is asked again with the informers' backoff until it answers or the controller
 * is stopped, as the informers would keep retrying their lists.
 */
export async function servedPodCertificateVersion(client: Pick<KubeClient, 'requestJSON'>, logger: Logger, retry: DiscoveryRetry): Promise<PodCertificateVersion | undefined> {
  const backoff = retry.backoff ?? new JitteredBackoff();
  while (!retry.signal?.aborted) {
    try {
      const version = await discoverPodCertificateVersion(client, retry.signal);
      if (version === undefined) logger.warn({ versions: PCR_VERSIONS }, 'PodCertificateRequests not served: the workload signer and the PodCertificateRequest cleaner stay off');
      return version;
    } catch (err) {
      if (retry.signal?.aborted) break;
      if (isRefused(err)) logger.error({ err, status: httpStatusOf(err) }, REFUSED_MESSAGE);
      else logger.info({ err }, 'PodCertificateRequest discovery failed, retrying');
      await sleep(retry.clock, backoff.next(), retry.signal);
    }
  }
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
      client: ctx.client.forComponent(WORKLOAD_SIGNER_NAME),
      events: ctx.deps(WORKLOAD_SIGNER_NAME).events,
      metrics: PodCertificateMetrics.for(ctx.registry),
      clock: ctx.clock,
    }),
    watches: [watch(pcrInformer, (pcr) => (workloadSignerSkips(pcr, signerNames) ? [] : [keyOf(pcr)])), watch(revisions, pending)],
  });
}
