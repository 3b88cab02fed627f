/**
 * certificates.k8s.io ClusterTrustBundles (upstream's pkg/registry/certificates/clustertrustbundle):
 * cluster-scoped, no status, nothing prepared, conditional updates only, the `spec.signerName` field
 * selector. Served in v1, v1beta1 and v1alpha1, whose schemas are the same: the objects are stored once, as
 * v1beta1 (readable by a server that has no v1 yet), and the other versions are views of them (ConvertedStore)
 * that only rename the apiVersion.
 */
import type { KObject } from '../../../api/meta.js';
import { findResource, type ResourceInfo } from '../../../api/resources.js';
import { CTB_RESOURCE, CTB_STORAGE_API_VERSION, CTB_VERSIONS, type ClusterTrustBundleSpec, type ClusterTrustBundleWire, type CtbVersion } from '../../../api/trust-bundles.js';
import type { Store } from '../../storage/store.js';
import { storageKey } from '../../storage/store.js';
import { ConvertedStore } from '../generic/converted-store.js';
import type { Strategy, TableConvertor } from '../generic/strategy.js';
import { column, NAME_COLUMN } from '../generic/table.js';
import { validateClusterTrustBundle, validateClusterTrustBundleUpdate } from './trust-bundle-validation.js';

const signerNameOf = (obj: KObject): string => ((obj.spec ?? {}) as Partial<ClusterTrustBundleSpec>).signerName ?? '';

/** printClusterTrustBundle: Name and SignerName. */
const table: TableConvertor<ClusterTrustBundleWire> = {
  columns: [
    NAME_COLUMN,
    column(
      'SignerName',
      'string',
      'signerName indicates the associated signer, if any.\n\nIn order to create or update a ClusterTrustBundle that sets signerName, you must have the following cluster-scoped permission: group=certificates.k8s.io resource=signers resourceName=<the signer name> verb=attest.\n\nIf signerName is not empty, then the ClusterTrustBundle object must be named with the signer name as a prefix (translating slashes to colons). For example, for the signer name `example.com/foo`, valid ClusterTrustBundle object names include `example.com:foo:abc` and `example.com:foo:v1`.\n\nIf signerName is empty, then the ClusterTrustBundle object\'s name must not have such a prefix.\n\nList/watch requests for ClusterTrustBundles can filter on this field using a `spec.signerName=NAME` field selector.',
    ),
  ],
  cells: (obj) => [obj.metadata?.name ?? '', signerNameOf(obj) || '<none>'],
};

function infoFor(version: CtbVersion): ResourceInfo {
  const found = findResource('certificates.k8s.io', version, CTB_RESOURCE);
  if (!found) throw new Error(`clustertrustbundles ${version} missing from RESOURCES`);
  return found;
}

function strategyFor(version: CtbVersion): Strategy<ClusterTrustBundleWire> {
  return {
    info: infoFor(version),
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    // The name rule depends on spec.signerName, so validate() checks it with the object in hand.
    validateName: () => [],
    validate: (obj) => validateClusterTrustBundle(obj),
    validateUpdate: (obj, old) => validateClusterTrustBundleUpdate(obj, old),
    fieldSelectors: { 'spec.signerName': signerNameOf },
    table,
  };
}

export const clusterTrustBundleStrategies: readonly Strategy[] = CTB_VERSIONS.map(strategyFor);

const withApiVersion = (obj: KObject, apiVersion: string): KObject => ({ ...obj, apiVersion });

/** The store a version's registry works on: the stored objects themselves, or a view renaming their version. */
export function clusterTrustBundleStore(store: Store, info: ResourceInfo): Store {
  const served = `certificates.k8s.io/${info.version}`;
  if (served === CTB_STORAGE_API_VERSION) return store;
  const prefix = storageKey(info.group, info.plural, undefined);
  return new ConvertedStore(store, {
    viewPrefix: prefix,
    storagePrefix: prefix,
    fromStorage: (obj) => withApiVersion(obj, served),
    toStorage: (obj) => withApiVersion(obj, CTB_STORAGE_API_VERSION),
  });
}
