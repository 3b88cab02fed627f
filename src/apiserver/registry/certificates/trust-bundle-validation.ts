/**
 * ClusterTrustBundle validation as upstream's pkg/apis/certificates/validation: the name carries the
 * signer's prefix exactly when spec.signerName is set, the signer name's syntax, and a trust bundle of
 * PEM CERTIFICATE blocks without headers, each a CA certificate, none twice, at least one, at most 1 MiB.
 * Messages are upstream's, since clients and tests match on them.
 */
import { BasicConstraintsExtension, X509Certificate } from '@peculiar/x509';
import { type ClusterTrustBundleWire, trustBundleNamePrefix } from '../../../api/trust-bundles.js';
import { decodePemBlocks, type PemBlock } from '../../../pki/pem.js';
import { type FieldError, invalid, tooLong } from '../../http/field-errors.js';
import { byteLength, validateSubdomainName } from '../../validation/names.js';
import { validateSignerName } from './signer-name.js';

/** MaxTrustBundleSize upstream. */
export const MAX_TRUST_BUNDLE_SIZE = 1024 * 1024;
const OMITTED = '<value omitted>';
const TRUST_BUNDLE = 'spec.trustBundle';


/** ValidateClusterTrustBundleName: the signer's prefix when there is a signer, no `:` at all when there is none. */
export function trustBundleNameErrors(name: string, signerName: string): string[] {
  if (signerName === '') {
    if (name.includes(':')) return ['ClusterTrustBundle without signer name must not have ":" in its name'];
    return validateSubdomainName(name, false);
  }
  const prefix = trustBundleNamePrefix(signerName);
  if (!name.startsWith(prefix)) return [`ClusterTrustBundle for signerName ${signerName} must be named with prefix ${prefix}`];
  return validateSubdomainName(name.slice(prefix.length), false);
}

function isCaCertificate(der: Uint8Array): boolean | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(der);
  } catch {
    return undefined;
  }
  return cert.getExtension(BasicConstraintsExtension)?.ca === true;
}

/** The blocks of `bundle` as Go's pem.Decode finds them, or the decoder's complaint about a malformed one. */
function blocksOf(bundle: string): PemBlock[] | string {
  try {
    return decodePemBlocks(bundle);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** validateTrustBundle: a malformed entry hides the duplicate and empty checks, as upstream. */
export function validateTrustBundle(bundle: string): FieldError[] {
  if (byteLength(bundle) > MAX_TRUST_BUNDLE_SIZE) return [tooLong(TRUST_BUNDLE, MAX_TRUST_BUNDLE_SIZE)];
  const blocks = blocksOf(bundle);
  if (typeof blocks === 'string') return [invalid(TRUST_BUNDLE, OMITTED, blocks)];
  const errs: FieldError[] = [];
  const seen = new Map<string, number[]>();
  blocks.forEach((b, i) => {
    let problem: string | undefined;
    if (b.type !== 'CERTIFICATE') problem = `entry ${i} has bad block type: ${b.type}`;
    else if (Object.keys(b.headers).length > 0) problem = `entry ${i} has PEM block headers`;
    else {
      const ca = isCaCertificate(b.der);
      if (ca === undefined) problem = `entry ${i} does not parse as X.509`;
      else if (!ca) problem = `entry ${i} does not have the CA bit set`;
    }
    if (problem !== undefined) {
      errs.push(invalid(TRUST_BUNDLE, OMITTED, problem));
      return;
    }
    const key = Buffer.from(b.der).toString('base64');
    seen.set(key, [...(seen.get(key) ?? []), i]);
  });
  if (errs.length > 0) return errs;
  if (seen.size === 0) return [invalid(TRUST_BUNDLE, OMITTED, 'at least one trust anchor must be provided')];
  for (const indices of seen.values()) {
    // Go prints the indices as %v of an []int.
    if (indices.length > 1) errs.push(invalid(TRUST_BUNDLE, OMITTED, `duplicate trust anchor (indices [${indices.join(' ')}])`));
  }
  return errs;
}

/** ValidateClusterTrustBundle; the trust bundle is parsed unless `parseBundle` is false. */
export function validateClusterTrustBundle(obj: ClusterTrustBundleWire, parseBundle = true): FieldError[] {
  const signerName = obj.spec?.signerName ?? '';
  const name = obj.metadata?.name ?? '';
  const errs: FieldError[] = name === '' ? [] : trustBundleNameErrors(name, signerName).map((m) => invalid('metadata.name', name, m));
  if (signerName !== '') errs.push(...validateSignerName('spec.signerName', signerName));
  if (parseBundle) errs.push(...validateTrustBundle(obj.spec?.trustBundle ?? ''));
  return errs;
}

/**
 * ValidateClusterTrustBundleUpdate: an unchanged trust bundle is not parsed again (so a stricter parser
 * never strands stored objects), and signerName is immutable.
 */
export function validateClusterTrustBundleUpdate(obj: ClusterTrustBundleWire, old: ClusterTrustBundleWire): FieldError[] {
  const errs = validateClusterTrustBundle(obj, (obj.spec?.trustBundle ?? '') !== (old.spec?.trustBundle ?? ''));
  const signerName = obj.spec?.signerName ?? '';
  if (signerName !== (old.spec?.signerName ?? '')) errs.push(invalid('spec.signerName', signerName, 'field is immutable'));
  return errs;
}
