/**
 * The `signers` pseudo-resource of certificates.k8s.io (upstream's pkg/certauthorization): who may
 * approve, sign or attest for a signer name. Shared by the CSR and ClusterTrustBundle admission
 * plugins and the PodCertificateRequest status strategy.
 */
import { CERTIFICATES_GROUP } from '../../api/certificates.js';
import type { UserInfo } from '../../api/meta.js';
import type { Authorizer } from './authorizer.js';

async function allowed(authorizer: Authorizer, user: UserInfo, verb: string, name: string): Promise<boolean> {
  try {
    const decision = await authorizer.authorize({ user, verb, apiGroup: CERTIFICATES_GROUP, resource: 'signers', name });
    return decision.allowed;
  } catch {
    // Upstream logs authorizer errors and treats them as a denial.
    return false;
  }
}

/**
 * Whether the user holds `verb` on the `signers` resource for this signer: by its exact name, or
 * by the wildcard `<domain>/*` for the part before the first slash.
 */
export async function isAuthorizedForSignerName(
  authorizer: Authorizer,
  user: UserInfo,
  verb: string,
  signerName: string,
): Promise<boolean> {
  if (await allowed(authorizer, user, verb, signerName)) return true;
  const domain = signerName.split('/')[0] ?? '';
  return allowed(authorizer, user, verb, `${domain}/*`);
}
