/**
 * certificates.k8s.io ClusterTrustBundle (KEP-3257): plain types, names and the naming rule shared by
 * the API server's registry and the controller that publishes its signers' CAs.
 */
import type { KObject } from './meta.js';
import type { Wire } from './wire.js';

export const CTB_RESOURCE = 'clustertrustbundles';
export const CTB_KIND = 'ClusterTrustBundle';
/**
 * The versions served, preferred first: v1 (GA in 1.37), then v1beta1 and v1alpha1, which upstream keeps
 * but serves only when enabled (docs/compatibility.md says why they stay on here). All three share one schema.
 */
export const CTB_VERSIONS = ['v1', 'v1beta1', 'v1alpha1'] as const;
export type CtbVersion = (typeof CTB_VERSIONS)[number];
/** What clients should write: the preferred version. */
export const CTB_API_VERSION = `certificates.k8s.io/${CTB_VERSIONS[0]}`;
/**
 * The version objects are stored in. Still v1beta1: a server one release older (which has no v1) can then
 * read what this one wrote, so a rollback keeps every bundle (upstream's rule for a version that is new).
 */
export const CTB_STORAGE_API_VERSION = 'certificates.k8s.io/v1beta1';
/** The signers resource verb that lets a user write bundles naming a signer. */
export const VERB_ATTEST = 'attest';

export interface ClusterTrustBundleSpec {
  signerName?: string;
  /** PEM CERTIFICATE blocks, each a CA certificate. */
  trustBundle: string;
}

export interface ClusterTrustBundle extends KObject {
  spec: ClusterTrustBundleSpec;
}

/** A bundle as the API server decodes and stores it: every field may be absent, as Go decodes it. */
export interface ClusterTrustBundleWire extends KObject {
  spec?: Wire<ClusterTrustBundleSpec>;
}

/** The prefix every bundle naming `signerName` must carry: the signer name with `/` as `:`, then `:`. */
export function trustBundleNamePrefix(signerName: string): string {
  return `${signerName.replaceAll('/', ':')}:`;
}
