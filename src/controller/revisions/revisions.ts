/**
 * Keeps the signers' effective configuration (CA fingerprint and certificate, max duration, policy)
 * as immutable apps/v1 ControllerRevisions in the controller's namespace, and publishes each
 * signer's trust bundle (current CA plus still-valid previous CAs) to a ConfigMap and as a
 * ClusterTrustBundle per signer (cluster-trust-bundles.ts). It re-checks the
 * CA files every interval and whenever a labelled ControllerRevision changes; a new revision is what
 * makes the signers re-queue their pending approved CSRs (they watch the same revisions).
 */
import { AppsV1Api, CoreV1Api, type V1ConfigMap, type V1ControllerRevision } from '@kubernetes/client-node';
import type { KList, KObject } from '../../api/meta.js';
import { sleep, type Clock } from '../../lib/clock.js';
import type { Logger } from '../../log/logger.js';
import type { CsrMetrics } from '../../metrics/csr.js';
import type { CaSignerSource } from '../../pki/ca.js';
import type { KubeClient } from '../client/kube-client.js';
import { isConflict, isNotFound } from '../../lib/api-errors.js';
import type { Runnable } from '../runtime/manager.js';
import { publishClusterTrustBundles } from './cluster-trust-bundles.js';
import {
  bundleKey,
  byRevisionDesc,
  canonicalData,
  dataOf,
  fingerprintOf,
  revisionName,
  revisionOf,
  revisionsToPrune,
  trustBundles,
  type SignerRecord,
} from './revision-data.js';

export const REVISIONS_NAME = 'csrsigning-revisions';
export const REVISION_PREFIX = 'kube-identity-signers';
/** The label that marks (and selects) this controller's revisions. */
export const REVISION_LABEL = 'kube-identity.io/controller';
export const REVISION_LABEL_VALUE = 'csrsigning';
export const REVISION_SELECTOR = `${REVISION_LABEL}=${REVISION_LABEL_VALUE}`;

export interface RevisionSigner {
  signerName: string;
  policy: string;
  ca: CaSignerSource;
  maxDurationMs: number;
}

export interface RevisionSyncOptions {
  client: KubeClient;
  namespace: string;
  signers: readonly RevisionSigner[];
  historyLimit: number;
  bundle: { namespace: string; name: string };
  /** Whose ClusterTrustBundles these are (publisherIdentity): only those are ever deleted. */
  publisher: string;
  clock: Clock;
  logger: Logger;
  metrics: CsrMetrics;
  /** How often the CA files are re-checked (default 60 s, upstream's reload resync). */
  intervalMs?: number;
}

export interface SyncOutcome {
  current: string;
  created: boolean;
}

export class RevisionSync implements Runnable {
  readonly name = REVISIONS_NAME;
  readonly needLeaderElection = true;
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly logger: Logger;
  private kickPending = false;
  private wake: (() => void) | undefined;

  constructor(private readonly o: RevisionSyncOptions) {
    this.apps = o.client.api(AppsV1Api);
    this.core = o.client.api(CoreV1Api);
    this.logger = o.logger.child({ controller: REVISIONS_NAME });
  }

  /** Asks for a sync soon (a revision changed under us). */
  kick(): void {
    this.kickPending = true;
    this.wake?.();
  }

  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.kickPending = false;
      try {
        await this.sync();
      } catch (err) {
        this.logger.info({ err }, 'signer revision sync failed');
      }
      if (this.kickPending) continue;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        void sleep(this.o.clock, this.o.intervalMs ?? 60_000, signal).then(resolve);
      });
      this.wake = undefined;
    }
  }

  /** One pass: record the current configuration, prune history, publish the bundles. */
  async sync(): Promise<SyncOutcome | undefined> {
    const history = await this.listRevisions();
    const latest = byRevisionDesc(history)[0];
    const records = this.currentRecords(latest);
    if (records.length === 0) return undefined;
    const data = canonicalData(records);
    const name = revisionName(REVISION_PREFIX, data);
    const created = await this.ensureCurrent(history, name, data);
    const kept = await this.prune(await this.listRevisions(), name);
    const bundles = trustBundles(data, kept, this.o.clock.now());
    await this.publish(bundles);
    await publishClusterTrustBundles(this.o.client, bundles, this.o.publisher, this.logger);
    return { current: name, created };
  }

  /** Each signer's record; a signer whose CA cannot be read keeps its last recorded entry. */
  private currentRecords(latest: KObject | undefined): SignerRecord[] {
    const previous = latest ? (dataOf(latest)?.signers ?? []) : [];
    const out: SignerRecord[] = [];
    for (const s of this.o.signers) {
      try {
        const ca = s.ca.signer();
        this.o.metrics.caExpiry.set({ signer: s.signerName }, ca.notAfter.getTime() / 1000);
        out.push({
          signerName: s.signerName,
          caFingerprintSha256: fingerprintOf(ca.certDer),
          caCertificate: ca.certPem.trim() + '\n',
          maxDurationSeconds: Math.floor(s.maxDurationMs / 1000),
          policy: s.policy,
        });
      } catch (err) {
        this.logger.info({ err, signer: s.signerName }, 'signer CA unavailable, keeping its recorded configuration');
        const prev = previous.find((p) => p.signerName === s.signerName);
        if (prev) out.push(prev);
      }
    }
    return out;
  }

  private async listRevisions(): Promise<KObject[]> {
    const path = `/apis/apps/v1/namespaces/${encodeURIComponent(this.o.namespace)}/controllerrevisions`;
    const list = await this.o.client.requestJSON<KList<KObject>>('GET', path, { labelSelector: REVISION_SELECTOR });
    return list.items;
  }

  /** Makes `name` the newest revision: create it, or renumber an identical older one (a rollback). */
  private async ensureCurrent(history: KObject[], name: string, data: ReturnType<typeof canonicalData>): Promise<boolean> {
    const newest = byRevisionDesc(history)[0];
    if (newest?.metadata?.name === name) return false;
    const next = (newest ? revisionOf(newest) : 0) + 1;
    const namespace = this.o.namespace;
    const existing = history.find((r) => r.metadata?.name === name);
    try {
      if (existing) {
        await this.apps.replaceNamespacedControllerRevision({ name, namespace, body: { ...existing, revision: next } as V1ControllerRevision });
      } else {
        const body: V1ControllerRevision = {
          apiVersion: 'apps/v1',
          kind: 'ControllerRevision',
          metadata: { name, namespace, labels: { [REVISION_LABEL]: REVISION_LABEL_VALUE, 'app.kubernetes.io/managed-by': 'kube-identity' } },
          data,
          revision: next,
        };
        await this.apps.createNamespacedControllerRevision({ namespace, body });
      }
    } catch (err) {
      // Another replica got there first: the next pass sees its result.
      if (isConflict(err)) return false;
      throw err;
    }
    this.logger.info({ revision: name, number: next, signers: data.signers.map((s) => s.signerName) }, 'signer configuration recorded');
    return true;
  }

  /** Deletes revisions beyond the history limit; returns the ones kept. */
  private async prune(revs: KObject[], current: string): Promise<KObject[]> {
    const drop = revisionsToPrune(revs, this.o.historyLimit, current);
    for (const r of drop) {
      const name = r.metadata?.name ?? '';
      try {
        await this.apps.deleteNamespacedControllerRevision({ name, namespace: this.o.namespace, body: { preconditions: { uid: r.metadata?.uid } } });
        this.logger.info({ revision: name }, 'signer revision pruned');
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
    }
    const dropped = new Set(drop.map((r) => r.metadata?.name));
    return revs.filter((r) => !dropped.has(r.metadata?.name));
  }

  /** Writes the bundle ConfigMap when its data differs (created when missing). */
  private async publish(bundles: Map<string, string>): Promise<void> {
    const { namespace, name } = this.o.bundle;
    const data = Object.fromEntries([...bundles].map(([signer, pem]) => [bundleKey(signer), pem]));
    let current: KObject | undefined;
    try {
      current = await this.o.client.requestJSON<KObject>('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!current) {
      await this.core.createNamespacedConfigMap({ namespace, body: { metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'kube-identity' } }, data } });
      return;
    }
    if (JSON.stringify(current.data ?? {}) === JSON.stringify(data)) return;
    await this.core.replaceNamespacedConfigMap({ name, namespace, body: { ...(current as V1ConfigMap), data } });
    this.logger.info({ configMap: `${namespace}/${name}`, signers: [...bundles.keys()] }, 'trust bundle published');
  }
}
