/**
 * Wires the CSR controllers onto a Manager: one shared CSR informer; the approver (csrapproving);
 * one signer controller per configured signer (csrsigning-*); the cleaner (csrcleaner); and the
 * signer revision keeper with its ControllerRevision informer, whose new revisions re-queue each
 * signer's pending approved CSRs. Which signers run follows kube-controller-manager's CA file rules.
 * The workload signer (PodCertificateRequests, register-workload.ts) joins them when configured: its
 * CA goes through the same revision keeper. Where the server serves PodCertificateRequests, their
 * cleaner (podcertificaterequest-cleaner-controller) runs too, as in kube-controller-manager.
 */
import type { Registry } from 'prom-client';
import { CERTIFICATES_GROUP, CSR_RESOURCE, type CertificateSigningRequest } from '../api/certificates.js';
import type { KObject } from '../api/meta.js';
import type { ControllerConfig } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../log/logger.js';
import { CsrMetrics } from '../metrics/csr.js';
import type { KubeClient } from './client/kube-client.js';
import { apiSink, EventBroadcaster, type EventSink } from './events/broadcaster.js';
import { keyOf, type ReadonlyCache } from './informer/cache.js';
import { type Manager, watch } from './runtime/manager.js';
import type { Informer } from './informer/informer.js';
import { APPROVER_NAME, ApproverReconciler, approverSkips } from './approver/approver.js';
import { CaSource, type CaFiles } from './signer/ca-source.js';
import { CLEANER_NAME, Cleaner } from './cleaner/cleaner.js';
import { PCR_CLEANER_NAME, PcrCleaner } from './cleaner/pcr-cleaner.js';
import { PcrCleanerMetrics } from '../metrics/cleaner.js';
import { PCR_RESOURCE, type PodCertificateRequestV1beta1 } from '../api/pod-certificates.js';
import { CsrApi } from './csr/csr-api.js';
import type { CsrReconcilerDeps } from './csr/csr-deps.js';
import { csrCacheTransform } from './csr/csr-cache-transform.js';
import { hasCertificate, isDenied, isFailed } from './csr/csr-conditions.js';
import { ParsedRequests } from './csr/parsed-requests.js';
import { IssuedCertificates } from './csr/issued-certificates.js';
import { publisherIdentity } from './revisions/cluster-trust-bundles.js';
import { REVISION_SELECTOR, REVISIONS_NAME, RevisionSync, type RevisionSigner } from './revisions/revisions.js';
import { signingPlan, type SigningPlanEntry } from './signer/signing-plan.js';
import { SignerReconciler, signerSkips } from './signer/signer.js';
import { addServingApprover } from './register-serving.js';
import { addWorkloadSigner, servedPodCertificateVersion, workloadRevisionSigners, workloadSignerPlan, type PodCertificateVersion } from './register-workload.js';
import type { ResolveHost } from './serving-approver/serving-dns.js';
import type { RateLimiterOptions } from './workqueue/rate-limiter.js';

/** What registration needs beyond the manager: where metrics, logs, time and Events go. */
export interface RegisterDeps {
  registry: Registry;
  logger: Logger;
  clock: Clock;
  /** Where Events are written (default: the API server through `client`). */
  eventSink?: EventSink;
  /** How the serving approver resolves DNS SANs (default: the system's resolver). */
  resolveHost?: ResolveHost;
  /** The controller's stop: ends the wait for the API server's discovery at start. */
  signal?: AbortSignal;
}

/** Handles for tests and for src/cmd. */
export interface Registered {
  csrInformer: Informer<CertificateSigningRequest>;
  cleaner: Cleaner;
  revisions: RevisionSync | undefined;
  signers: string[];
  /** Only where PodCertificateRequests are served. */
  pcrCleaner?: { cleaner: PcrCleaner; informer: Informer<PodCertificateRequestV1beta1> };
}

/** kube-controller-manager's values (it has no flags for them): requests live 15 minutes, checked every 5. */
export const PCR_CLEANER_THRESHOLD_MS = 15 * 60_000;
export const PCR_CLEANER_INTERVAL_MS = 5 * 60_000;

/** The oldest creation time of pending CSRs (no certificate, not denied, not failed), per signer. */
function oldestPending(csrs: ReadonlyCache<CertificateSigningRequest>): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of csrs.list()) {
    if (hasCertificate(c) || isDenied(c) || isFailed(c)) continue;
    const t = Date.parse(c.metadata?.creationTimestamp ?? '');
    const prev = out.get(c.spec.signerName);
    if (Number.isFinite(t) && (prev === undefined || t < prev)) out.set(c.spec.signerName, t);
  }
  return out;
}

/**
 * The keys a CSR event gives a controller: none when the controller would skip the CSR anyway
 * (another signer, already issued or decided). Level-based, so nothing is lost: any later change
 * is a new event judged on the new object. At start this keeps tens of thousands of issued CSRs
 * out of the queues instead of dequeuing each only to skip it.
 */
export const unlessSkipped = (skips: (csr: CertificateSigningRequest) => boolean) => (csr: Readonly<CertificateSigningRequest>): string[] =>
  csr.spec?.signerName !== undefined && !skips(csr) ? [keyOf(csr)] : [];

/**
 * The `register` hook runController takes: every controller, the workload signer and the PCR
 * cleaner in the PodCertificateRequest version the server serves (asked before anything starts,
 * again with backoff while the server cannot be reached, until `deps.signal` aborts).
 */
export async function registerControllers(mgr: Manager, client: KubeClient, config: ControllerConfig, deps: RegisterDeps = mgr.shared): Promise<Registered> {
  const podCertificates = await servedPodCertificateVersion(client, deps.logger, { clock: deps.clock, signal: deps.signal });
  const registered = registerCsrControllers(mgr, client, config, deps, podCertificates);
  return podCertificates ? { ...registered, pcrCleaner: addPcrCleaner(mgr, client, podCertificates, deps) } : registered;
}

/** The PodCertificateRequest cleaner, over an informer of its own in the version served. */
function addPcrCleaner(mgr: Manager, client: KubeClient, version: PodCertificateVersion, deps: RegisterDeps): NonNullable<Registered['pcrCleaner']> {
  const informer = mgr.informer<PodCertificateRequestV1beta1>({
    name: `${PCR_RESOURCE}-cleaner`,
    resource: { group: CERTIFICATES_GROUP, version, plural: PCR_RESOURCE },
  });
  const cleaner = new PcrCleaner({
    client: client.forComponent(PCR_CLEANER_NAME),
    version,
    pcrs: informer.store,
    clock: deps.clock,
    logger: deps.logger,
    metrics: PcrCleanerMetrics.for(deps.registry),
    thresholdMs: PCR_CLEANER_THRESHOLD_MS,
    intervalMs: PCR_CLEANER_INTERVAL_MS,
  });
  mgr.add(cleaner);
  return { cleaner, informer };
}

/** What every CSR controller is built from: one informer, one API, one event broadcaster. */
export interface CsrControllerContext {
  mgr: Manager;
  client: KubeClient;
  config: ControllerConfig;
  registry: Registry;
  logger: Logger;
  clock: Clock;
  /** The CSR API as `component` calls it. */
  api(component: string): CsrApi;
  csrInformer: Informer<CertificateSigningRequest>;
  /** The same informer, as the Manager's watches take it. */
  rateLimiter: RateLimiterOptions;
  /** The dependencies of a CSR reconciler whose Events carry `component`. */
  deps(component: string): CsrReconcilerDeps;
}

/**
 * Registers everything and returns handles (tests drive the cleaner and revisions through them).
 * `podCertificates`: the PodCertificateRequest version served; without it the workload signer's CA is
 * still published but no request is signed.
 */
export function registerCsrControllers(
  mgr: Manager,
  client: KubeClient,
  config: ControllerConfig,
  deps: RegisterDeps = mgr.shared,
  podCertificates?: PodCertificateVersion,
): Registered {
  const ctx = csrControllerContext(mgr, client, config, deps);
  addApprover(ctx);
  if (config.approveKubeletServing) addServingApprover(ctx, deps.resolveHost);
  const cleaner = addCleaner(ctx);
  const plan = signingPlan(config);
  const workload = workloadSignerPlan(config);
  if (plan.length === 0) ctx.logger.info('Skipping CSR signer controller because no csr cert/key was specified');
  if (plan.length === 0 && !workload) return { csrInformer: ctx.csrInformer, cleaner, revisions: undefined, signers: [] };
  const sourceFor = caSources(ctx);
  const workloadCa = workload && sourceFor(workload.files);
  const { revisions, revisionInformer } = addSigners(ctx, plan, sourceFor, workload && workloadCa ? workloadRevisionSigners(workload, workloadCa) : []);
  if (workload && workloadCa && podCertificates) addWorkloadSigner(ctx, workload, podCertificates, workloadCa, revisionInformer);
  return { csrInformer: ctx.csrInformer, cleaner, revisions, signers: plan.map((p) => p.policy.signerName) };
}

/** The shared CSR informer, API, metrics and event broadcaster (a runnable of its own). */
export function csrControllerContext(mgr: Manager, client: KubeClient, config: ControllerConfig, deps: RegisterDeps): CsrControllerContext {
  const { registry, logger, clock } = deps;
  const metrics = CsrMetrics.for(registry);
  const issued = new IssuedCertificates();
  const csrInformer = mgr.informer<CertificateSigningRequest>({
    name: CSR_RESOURCE,
    resource: { group: CERTIFICATES_GROUP, version: 'v1', plural: CSR_RESOURCE },
    transform: csrCacheTransform(undefined, issued),
  });
  const csrs = csrInformer.store;
  metrics.addOldestPendingSource(() => oldestPending(csrs), () => clock.now());
  // One writer sends every controller's Events (upstream's recorders write through each controller's client).
  const broadcaster = new EventBroadcaster({ sink: deps.eventSink ?? apiSink(client.forComponent('event-broadcaster')), clock, logger, registry });
  mgr.add(broadcaster);
  const requests = new ParsedRequests();
  // Each controller's requests name it in their User-Agent, as kube-controller-manager's do.
  const api = (component: string): CsrApi => new CsrApi(client.forComponent(component));
  return {
    mgr,
    client,
    config,
    registry,
    logger,
    clock,
    csrInformer,
    rateLimiter: {
      baseDelayMs: config.rateLimiterBaseDelay,
      maxDelayMs: config.rateLimiterMaxDelay,
      qps: config.rateLimiterQps,
      burst: config.rateLimiterBurst,
    },
    api,
    deps: (component) => ({ api: api(component), csrs, events: broadcaster.recorder(component), metrics, clock, requests, issued }),
  };
}

function addApprover(ctx: CsrControllerContext): void {
  ctx.mgr.addController({
    name: APPROVER_NAME,
    workers: ctx.config.approverWorkers,
    rateLimiter: ctx.rateLimiter,
    reconciler: new ApproverReconciler(ctx.deps(APPROVER_NAME)),
    watches: [watch(ctx.csrInformer, unlessSkipped(approverSkips))],
  });
}

function addCleaner(ctx: CsrControllerContext): Cleaner {
  const { config } = ctx;
  const cleaner = new Cleaner({
    api: ctx.api(CLEANER_NAME),
    csrs: ctx.csrInformer.store,
    clock: ctx.clock,
    logger: ctx.logger,
    intervalMs: config.cleanerInterval,
    durations: { approvedMs: config.cleanerApprovedExpiration, deniedMs: config.cleanerDeniedExpiration, pendingMs: config.cleanerPendingExpiration },
  });
  ctx.mgr.add(cleaner);
  return cleaner;
}

/** One CaSource per distinct pair of CA files, shared by the signers that use the pair. */
function caSources(ctx: CsrControllerContext): (files: CaFiles) => CaSource {
  const sources = new Map<string, CaSource>();
  return (files) => {
    const id = `${files.certFile}\0${files.keyFile}`;
    let s = sources.get(id);
    if (!s) {
      const onReload = (e: { ok: boolean; error?: Error }): void =>
        ctx.logger.info({ certFile: files.certFile, ok: e.ok, err: e.error }, e.ok ? 'CA files reloaded' : 'CA files not reloaded, keeping the previous CA');
      sources.set(id, (s = new CaSource(files, onReload, () => ctx.clock.now())));
    }
    return s;
  };
}

/**
 * A signer controller per plan entry, and the revision keeper whose new revisions re-queue them; it
 * records and publishes the `extra` signers' CAs (the workload signer's) too.
 */
function addSigners(
  ctx: CsrControllerContext,
  plan: SigningPlanEntry[],
  sourceFor: (files: CaFiles) => CaSource,
  extra: RevisionSigner[],
): { revisions: RevisionSync; revisionInformer: Informer<KObject> } {
  const { mgr, config } = ctx;
  const csrs = ctx.csrInformer.store;
  const revisionInformer = mgr.informer<KObject>({
    name: 'controllerrevisions',
    resource: { group: 'apps', version: 'v1', plural: 'controllerrevisions', namespace: config.controllerNamespace, labelSelector: REVISION_SELECTOR },
  });
  for (const { policy, files } of plan) {
    mgr.addController({
      name: policy.controllerName,
      workers: config.signerWorkers,
      rateLimiter: ctx.rateLimiter,
      reconciler: new SignerReconciler({
        ...ctx.deps(policy.controllerName),
        policy,
        ca: sourceFor(files),
        maxDurationMs: config.clusterSigningDuration,
        keyPolicy: { minRsaBits: config.signerMinRsaBits },
      }),
      watches: [
        watch(ctx.csrInformer, unlessSkipped((csr) => signerSkips(csr, policy.signerName))),
        // A new signer configuration (a rotated CA) gives pending approved CSRs another try.
        watch(revisionInformer, () => csrs.list().filter((c) => !signerSkips(c, policy.signerName)).map((c) => keyOf(c))),
      ],
    });
  }
  const revisions = new RevisionSync({
    client: ctx.client.forComponent(REVISIONS_NAME),
    namespace: config.controllerNamespace,
    signers: [
      ...plan.map(({ policy, files }) => ({ signerName: policy.signerName, policy: policy.policy, ca: sourceFor(files), maxDurationMs: config.clusterSigningDuration })),
      ...extra,
    ],
    historyLimit: config.revisionHistoryLimit,
    bundle: { namespace: config.trustBundleNamespace, name: config.trustBundleConfigMapName },
    publisher: publisherIdentity(config.leaderElectionNamespace, config.leaderElectionId),
    clock: ctx.clock,
    logger: ctx.logger,
    metrics: CsrMetrics.for(ctx.registry),
    intervalMs: config.caReloadInterval,
  });
  revisionInformer.addHandlers({ add: () => revisions.kick(), delete: () => revisions.kick() });
  mgr.add(revisions);
  return { revisions, revisionInformer };
}
