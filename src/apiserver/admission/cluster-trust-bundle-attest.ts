/**
 * ClusterTrustBundleAttest (upstream's ctbattest, on by default): creating or updating a
 * ClusterTrustBundle that names a signer needs the `attest` verb on that signer, so only who may speak
 * for a signer can tell workloads which CAs to trust for it. The new object is checked (its signerName
 * is immutable, so it is also the stored one); updates that touch only owner references and finalizers
 * pass, for the garbage collector and storage migration.
 */
import { CERTIFICATES_GROUP } from '../../api/certificates.js';
import { CTB_RESOURCE, VERB_ATTEST, type ClusterTrustBundleSpec } from '../../api/trust-bundles.js';
import { errors } from '../http/errors.js';
import { onlyGcFieldsChange } from '../registry/generic/meta.js';
import type { AdmissionPlugin } from './chain.js';
import type { AdmissionAttributes } from '../registry/generic/admission.js';
import { isAuthorizedForSignerName } from '../authorization/signers.js';

export const clusterTrustBundleAttest: AdmissionPlugin = {
  name: 'ClusterTrustBundleAttest',
  validate(a) {
    if (a.info.group !== CERTIFICATES_GROUP || a.info.plural !== CTB_RESOURCE) return undefined;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return undefined;
    const signerName = ((a.object.spec ?? {}) as Partial<ClusterTrustBundleSpec>).signerName ?? '';
    if (signerName === '') return undefined;
    if (a.operation === 'UPDATE' && a.oldObject && onlyGcFieldsChange(a.object, a.oldObject)) return undefined;
    return admitAttest(a, signerName);
  },
};

async function admitAttest(a: AdmissionAttributes, signerName: string): Promise<void> {
  if (await isAuthorizedForSignerName(a.ctx.authorizer, a.ctx.user, VERB_ATTEST, signerName)) return;
  throw errors.admissionForbidden(
    { group: CERTIFICATES_GROUP, resource: CTB_RESOURCE, name: a.object.metadata?.name },
    `user not permitted to attest for signerName ${JSON.stringify(signerName)}`,
  );
}
