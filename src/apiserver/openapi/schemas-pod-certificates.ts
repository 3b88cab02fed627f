/** certificates.k8s.io PodCertificateRequest in v1 and v1beta1 (v1beta1 adds the deprecated key pair). */
import { PCR_KIND, PCR_VERSIONS, type PcrVersion } from '../../api/pod-certificates.js';
import { arr, bytes, enumStr, int32, int64, kindAndList, kindSchema, map, META, obj, ref, type Schema, type Schemas, str, time } from './builder.js';

const condition = obj(
  {
    lastTransitionTime: time('When the condition last changed from one status to another.'),
    message: str('A human readable message with details about the transition.'),
    observedGeneration: int64('The .metadata.generation the condition was set based upon.'),
    reason: str('A programmatic identifier of the reason for the last transition, in CamelCase.'),
    status: enumStr('v1.ConditionStatus', 'True, False or Unknown.'),
    type: str('The condition type: Issued, Denied or Failed.'),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'], description: 'Condition contains details for one aspect of the current state of this API Resource.' },
);

function specSchema(version: PcrVersion): Schema {
  const deprecated: Record<string, Schema> =
    version === 'v1beta1'
      ? {
          pkixPublicKey: bytes('Deprecated: use stubPKCS10Request. The PKIX-serialized public key the certificate is issued to; when set, it must be the key of stubPKCS10Request.'),
          proofOfPossession: bytes('Deprecated: use stubPKCS10Request. A signature over the ASCII pod UID by the key of pkixPublicKey (Ed25519; ECDSA ASN.1 or RSASSA-PSS over its SHA-256).'),
        }
      : {};
  return obj(
    {
      maxExpirationSeconds: int32('The longest lifetime the certificate may have: 3600 to 7862400, at most 86400 for kubernetes.io signers. Defaults to 86400.'),
      nodeName: str('The name of the node the pod is assigned to.'),
      nodeUID: str('The UID of the node the pod is assigned to.'),
      podName: str('The name of the pod into which the certificate will be mounted.'),
      podUID: str('The UID of the pod into which the certificate will be mounted.'),
      serviceAccountName: str('The name of the service account the pod runs as.'),
      serviceAccountUID: str('The UID of the service account the pod runs as.'),
      signerName: str('The requested signer. List and watch can filter on it with a spec.signerName=NAME field selector. Names under kubernetes.io are reserved.'),
      stubPKCS10Request: bytes('A DER PKCS#10 request signed by the subject key: signers take the public key from it; the API server verifies its signature on create. Keys: RSA 3072 or 4096, ECDSA P-256, P-384 or P-521, or Ed25519.'),
      unverifiedUserAnnotations: map(str(), 'Annotations the pod author passed through the projected volume. Nobody verifies them: signers must not trust them for identity.'),
      ...deprecated,
    },
    {
      required: ['signerName', 'podName', 'podUID', 'serviceAccountName', 'serviceAccountUID', 'nodeName', 'nodeUID', 'stubPKCS10Request'],
      description: 'PodCertificateRequestSpec describes the certificate request. All fields are immutable after creation.',
    },
  );
}

const status = (): Schema =>
  obj(
    {
      beginRefreshAt: time('When the kubelet should start refreshing the certificate; set with certificateChain.'),
      certificateChain: str('The issued chain as PEM CERTIFICATE blocks, leaf first; set once, through /status.'),
      conditions: arr(ref(`${META}Condition`), {
        listType: 'map',
        mapKeys: ['type'],
        patchStrategy: 'merge',
        patchMergeKey: 'type',
        description: 'At most one of Issued, Denied and Failed, with status True. A signer that does not support the key type denies with reason UnsupportedKeyType.',
      }),
      notAfter: time('The notAfter of the leaf certificate; set with certificateChain.'),
      notBefore: time('The notBefore of the leaf certificate; set with certificateChain.'),
    },
    { description: 'PodCertificateRequestStatus holds the issued certificate chain, its times, and the conditions.' },
  );

function versionSchemas(version: PcrVersion): Schemas {
  const prefix = `io.k8s.api.certificates.${version}.`;
  const gvk = { group: 'certificates.k8s.io', version, kind: PCR_KIND };
  return {
    [`${prefix}PodCertificateRequestSpec`]: specSchema(version),
    [`${prefix}PodCertificateRequestStatus`]: status(),
    ...kindAndList(
      prefix,
      gvk,
      kindSchema(
        gvk,
        {
          spec: ref(`${prefix}PodCertificateRequestSpec`, 'spec contains the details about the certificate being requested.'),
          status: ref(`${prefix}PodCertificateRequestStatus`, 'status contains the issued certificate, and a standard set of conditions.'),
        },
        { required: ['spec'], description: 'PodCertificateRequest encodes a pod requesting a certificate from a given signer. Kubelets use this API to implement podCertificate projected volumes.' },
      ),
    ),
  };
}

/** metav1.Condition (not published before: no other kind we serve uses it) and both versions' kinds. */
export const POD_CERTIFICATE_SCHEMAS: Schemas = Object.assign({ [`${META}Condition`]: condition }, ...PCR_VERSIONS.map(versionSchemas)) as Schemas;
