/**
 * Publishes each signer's trust bundle (current CA plus the still-valid previous CAs the revisions
 * remember) as a certificates.k8s.io ClusterTrustBundle with spec.signerName, named by upstream's rule
 * (`<signer name, / as :>:kube-identity`), so consumers that read the standard API (the kubelet's
 * clusterTrustBundle projected volumes) see a rotation's old and new CAs side by side. Each bundle is
 * annotated with its publisher, the controller's identity (its Lease, shared by its replicas): a
 * publisher deletes only its own bundles of signers it no longer serves, never those of another
 * controller with another configuration, nor unannotated ones it cannot tell apart (it adopts those
 * of signers it serves). Writing them needs `attest` on each signer. Bundles go through the newest
 * version the server serves (v1 since 1.37, v1beta1 on 1.33-1.36); a server that serves none is
 * skipped, not an error.
 */
import type { KList, KObject } from '../../api/meta.js';
import { CTB_KIND, CTB_RESOURCE, CTB_VERSIONS, trustBundleNamePrefix, type ClusterTrustBundle } from '../../api/trust-bundles.js';
import { isConflict, isForbidden, isNotFound } from '../../lib/api-errors.js';
import type { Logger } from '../../log/logger.js';
import type { KubeClient } from '../client/kube-client.js';

/** Where one served version's bundles are written; the spec is the same in every version. */
interface Collection {
  apiVersion: string;
  path: string;
}
export const TRUST_BUNDLE_LABEL = 'kube-identity.io/trust-bundle';
const LABELS = { [TRUST_BUNDLE_LABEL]: 'signer', 'app.kubernetes.io/managed-by': 'kube-identity' };
/** Names the controller that published the bundle (`<Lease namespace>/<Lease name>`). */
export const PUBLISHER_ANNOTATION = 'kube-identity.io/publisher';

/** The identity a controller publishes under: its leader election Lease, one per controller whatever its replicas. */
export const publisherIdentity = (leaseNamespace: string, leaseName: string): string => `${leaseNamespace}/${leaseName}`;

/** The bundle this controller keeps for `signerName`. */
export function clusterTrustBundleName(signerName: string): string {
  return `${trustBundleNamePrefix(signerName)}kube-identity`;
}

const signerOf = (o: KObject): string => (o as ClusterTrustBundle).spec?.signerName ?? '';
const publisherOf = (o: KObject): string | undefined => o.metadata?.annotations?.[PUBLISHER_ANNOTATION];

/**
 * Creates or replaces one signer's bundle when its PEM differs or it names no publisher (one made
 * before bundles were annotated is adopted); whether it wrote. The writer becomes the publisher.
 */
async function writeBundle(client: KubeClient, at: Collection, current: KObject | undefined, spec: { signerName: string; trustBundle: string }, publisher: string): Promise<boolean> {
  const name = clusterTrustBundleName(spec.signerName);
  if (!current) {
    const metadata = { name, labels: LABELS, annotations: { [PUBLISHER_ANNOTATION]: publisher } };
    await client.requestJSON('POST', at.path, {}, undefined, { apiVersion: at.apiVersion, kind: CTB_KIND, metadata, spec });
    return true;
  }
  if ((current as ClusterTrustBundle).spec?.trustBundle === spec.trustBundle && publisherOf(current) !== undefined) return false;
  const metadata = { ...current.metadata, annotations: { ...current.metadata?.annotations, [PUBLISHER_ANNOTATION]: publisher } };
  await client.requestJSON('PUT', `${at.path}/${encodeURIComponent(name)}`, {}, undefined, { ...current, metadata, spec });
  return true;
}

async function deleteStale(client: KubeClient, at: Collection, stale: KObject, logger: Logger): Promise<void> {
  const name = stale.metadata?.name ?? '';
  try {
    await client.requestJSON('DELETE', `${at.path}/${encodeURIComponent(name)}`, {}, undefined, { preconditions: { uid: stale.metadata?.uid } });
    logger.info({ clusterTrustBundle: name }, 'cluster trust bundle of a signer no longer served deleted');
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
}

/**
 * The newest served version's bundles of this controller's label: v1 since Kubernetes 1.37, v1beta1
 * on 1.33-1.36 clusters that enable it, v1alpha1 before. Undefined when none is served.
 */
async function listPublished(client: KubeClient): Promise<{ at: Collection; existing: KObject[] } | undefined> {
  for (const version of CTB_VERSIONS) {
    const at = { apiVersion: `certificates.k8s.io/${version}`, path: `/apis/certificates.k8s.io/${version}/${CTB_RESOURCE}` };
    try {
      return { at, existing: (await client.requestJSON<KList<KObject>>('GET', at.path, { labelSelector: `${TRUST_BUNDLE_LABEL}=signer` })).items };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return undefined;
}

/**
 * Makes the bundles `publisher` publishes match `bundles` (signer name → PEM). A 409 from another
 * replica's write is left for the next pass, which reads what won.
 */
export async function publishClusterTrustBundles(client: KubeClient, bundles: ReadonlyMap<string, string>, publisher: string, logger: Logger): Promise<void> {
  const listed = await listPublished(client);
  if (!listed) {
    logger.debug({ resource: CTB_RESOURCE }, 'ClusterTrustBundles not served, not publishing them');
    return;
  }
  const { at, existing } = listed;
  for (const [signerName, trustBundle] of bundles) {
    const name = clusterTrustBundleName(signerName);
    try {
      if (!(await writeBundle(client, at, existing.find((o) => o.metadata?.name === name), { signerName, trustBundle }, publisher))) continue;
      logger.info({ clusterTrustBundle: name, signer: signerName }, 'cluster trust bundle published');
    } catch (err) {
      if (isConflict(err)) continue;
      // Missing `attest` on this signer (an older RBAC): the ConfigMap still carries its bundle.
      if (!isForbidden(err)) throw err;
      logger.info({ err, clusterTrustBundle: name, signer: signerName }, 'not permitted to publish cluster trust bundle');
    }
  }
  for (const stale of existing.filter((o) => publisherOf(o) === publisher && !bundles.has(signerOf(o)))) await deleteStale(client, at, stale, logger);
}
