/**
 * Publishes each signer's trust bundle (current CA plus the still-valid previous CAs the revisions
 * remember) as a certificates.k8s.io ClusterTrustBundle with spec.signerName, named by upstream's rule
 * (`<signer name, / as :>:kube-identity`), so consumers that read the standard API (the kubelet's
 * clusterTrustBundle projected volumes) see a rotation's old and new CAs side by side. Each bundle is
 * annotated with its publisher, the controller's identity (its Lease, shared by its replicas): a
 * publisher deletes only its own bundles of signers it no longer serves, never those of another
 * controller with another configuration, nor unannotated ones it cannot tell apart (it adopts those
 * of signers it serves). Writing them needs `attest` on each signer. A server that
 * does not serve ClusterTrustBundles (upstream's are off by default) is skipped, not an error.
 */
import type { KList, KObject } from '../../api/meta.js';
import { CTB_API_VERSION, CTB_KIND, CTB_RESOURCE, trustBundleNamePrefix, type ClusterTrustBundle } from '../../api/trust-bundles.js';
import { isConflict, isForbidden, isNotFound } from '../../lib/api-errors.js';
import type { Logger } from '../../log/logger.js';
import type { KubeClient } from '../client/kube-client.js';

const COLLECTION = `/apis/${CTB_API_VERSION}/${CTB_RESOURCE}`;
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
async function writeBundle(client: KubeClient, current: KObject | undefined, signerName: string, trustBundle: string, publisher: string): Promise<boolean> {
  const name = clusterTrustBundleName(signerName);
  const spec = { signerName, trustBundle };
  if (!current) {
    const metadata = { name, labels: LABELS, annotations: { [PUBLISHER_ANNOTATION]: publisher } };
    await client.requestJSON('POST', COLLECTION, {}, undefined, { apiVersion: CTB_API_VERSION, kind: CTB_KIND, metadata, spec });
    return true;
  }
  if ((current as ClusterTrustBundle).spec?.trustBundle === trustBundle && publisherOf(current) !== undefined) return false;
  const metadata = { ...current.metadata, annotations: { ...current.metadata?.annotations, [PUBLISHER_ANNOTATION]: publisher } };
  await client.requestJSON('PUT', `${COLLECTION}/${encodeURIComponent(name)}`, {}, undefined, { ...current, metadata, spec });
  return true;
}

async function deleteStale(client: KubeClient, stale: KObject, logger: Logger): Promise<void> {
  const name = stale.metadata?.name ?? '';
  try {
    await client.requestJSON('DELETE', `${COLLECTION}/${encodeURIComponent(name)}`, {}, undefined, { preconditions: { uid: stale.metadata?.uid } });
    logger.info({ clusterTrustBundle: name }, 'cluster trust bundle of a signer no longer served deleted');
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
}

/**
 * Makes the bundles `publisher` publishes match `bundles` (signer name → PEM). A 409 from another
 * replica's write is left for the next pass, which reads what won.
 */
export async function publishClusterTrustBundles(client: KubeClient, bundles: ReadonlyMap<string, string>, publisher: string, logger: Logger): Promise<void> {
  let existing: KObject[];
  try {
    existing = (await client.requestJSON<KList<KObject>>('GET', COLLECTION, { labelSelector: `${TRUST_BUNDLE_LABEL}=signer` })).items;
  } catch (err) {
    if (!isNotFound(err)) throw err;
    logger.debug({ resource: COLLECTION }, 'ClusterTrustBundles not served, not publishing them');
    return;
  }
  for (const [signerName, trustBundle] of bundles) {
    const name = clusterTrustBundleName(signerName);
    try {
      if (!(await writeBundle(client, existing.find((o) => o.metadata?.name === name), signerName, trustBundle, publisher))) continue;
      logger.info({ clusterTrustBundle: name, signer: signerName }, 'cluster trust bundle published');
    } catch (err) {
      if (isConflict(err)) continue;
      // Missing `attest` on this signer (an older RBAC): the ConfigMap still carries its bundle.
      if (!isForbidden(err)) throw err;
      logger.info({ err, clusterTrustBundle: name, signer: signerName }, 'not permitted to publish cluster trust bundle');
    }
  }
  for (const stale of existing.filter((o) => publisherOf(o) === publisher && !bundles.has(signerOf(o)))) await deleteStale(client, stale, logger);
}
