/**
 * NodeRestriction admission (plugin/pkg/admission/noderestriction upstream), for the kinds this
 * server serves: a kubelet may write only its own Node (never its taints, ownerReferences or
 * labels outside the kubelet's set — CVE-2025-5187 came from ownerReferences), only its own Lease
 * in kube-node-lease, only mirror pods bound to itself and the status of pods bound to itself, and
 * service-account tokens only bound (by uid) to a pod that runs on it and for an audience it uses, PodCertificateRequests only
 * for its own pods (node-restriction-pcr.ts), and CSRs for the kubelet signers only in its own name.
 * The Node authorizer lets every node attempt these writes; this plugin narrows them, on every
 * write path (create, update of the main resource and of /status, delete), with upstream's texts.
 */
import type { BoundObjectReference, TokenRequest } from '../../api/authentication.js';
import { SIGNER_KUBE_APISERVER_CLIENT_KUBELET, SIGNER_KUBELET_SERVING, type CertificateSigningRequestSpec } from '../../api/certificates.js';
import { NODE_LEASE_NAMESPACE, nodeIdentity, type Node } from '../../api/nodes.js';
import { isMirrorPod, MIRROR_POD_ANNOTATION, type Pod } from '../../api/pods.js';
import { findResource, type ResourceOf } from '../../api/resources.js';
import { record, text } from '../../lib/json.js';
import { deepEqual } from '../../lib/json-value.js';
import { parseCertificateRequestPem } from '../../pki/csr.js';
import { errors } from '../http/errors.js';
import { bytesText } from '../registry/certificates/bytes.js';
import { podReferences, projectedSources } from '../authorization/node/pod-references.js';
import { type AdmissionAttributes, writesObjectsOf } from '../registry/generic/admission.js';
import type { AdmissionPlugin } from './chain.js';
import { admitPodCertificateRequest } from './node-restriction-pcr.js';
import { PODS } from './pods.js';

const nodesInfo = findResource('', 'v1', 'nodes');
if (!nodesInfo) throw new Error('nodes missing from RESOURCES');
const NODES: ResourceOf<Node> = nodesInfo;

type NodeSpec = NonNullable<Node['spec']>;

const NODE_RESTRICTION_LABEL_NS = 'node-restriction.kubernetes.io';

/** Labels a kubelet may set on its own Node (k8s.io/kubelet's IsKubeletLabel). */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inDomain = (ns: string, domain: string): boolean => ns === domain || ns.endsWith(`.${domain}`);

function isKubeletLabel(key: string): boolean {
  const ns = labelNamespace(key);
  return KUBELET_LABELS.has(key) || KUBELET_LABEL_NAMESPACES.some((d) => inDomain(ns, d));
}

/** Keys added, removed or changed between two label maps. */
function modifiedLabels(a: Record<string, string> = {}, b: Record<string, string> = {}): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]);
}

/** The modified labels a kubelet may not touch: node-restriction ones, and kubernetes.io/k8s.io ones not its own. */
function forbiddenLabels(modified: string[]): string[] {
  return modified
    .filter((k) => {
      const ns = labelNamespace(k);
      if (inDomain(ns, NODE_RESTRICTION_LABEL_NS)) return true;
      const kube = inDomain(ns, 'kubernetes.io') || inDomain(ns, 'k8s.io');
      return kube && !isKubeletLabel(k);
    })
    .sort();
}

class Refusal {
  constructor(private readonly a: AdmissionAttributes) {}
  forbid(message: string): never {
    throw errors.admissionForbidden({ group: this.a.info.group, resource: this.a.info.plural, name: this.a.name }, message);
  }
}

function admitNodeCreate(nodeName: string, node: Node, r: Refusal): void {
  if (node.spec?.configSource != null) r.forbid(`node "${nodeName}" is not allowed to create pods with a non-nil configSource`);
  const bad = forbiddenLabels(modifiedLabels(node.metadata?.labels, undefined));
  if (bad.length > 0) r.forbid(`node "${nodeName}" is not allowed to set the following labels: ${bad.join(', ')}`);
}

function admitNodeSpecUpdate(nodeName: string, spec: NodeSpec, oldSpec: NodeSpec, r: Refusal): void {
  if (spec.configSource != null && !deepEqual(spec.configSource, oldSpec.configSource)) {
    r.forbid(`node "${nodeName}" is not allowed to update configSource to a new non-nil configSource`);
  }
  if (!deepEqual(spec.taints ?? [], oldSpec.taints ?? [])) r.forbid(`node "${nodeName}" is not allowed to modify taints`);
}

function admitNodeUpdate(nodeName: string, node: Node, old: Node, r: Refusal): void {
  admitNodeSpecUpdate(nodeName, node.spec ?? {}, old.spec ?? {}, r);
  if (!deepEqual(node.metadata?.ownerReferences ?? [], old.metadata?.ownerReferences ?? [])) {
    r.forbid(`node "${nodeName}" is not allowed to modify ownerReferences`);
  }
  const bad = forbiddenLabels(modifiedLabels(node.metadata?.labels, old.metadata?.labels));
  if (bad.length > 0) r.forbid(`is not allowed to modify labels: ${bad.join(', ')}`);
}

function admitNode(nodeName: string, a: AdmissionAttributes, r: Refusal): void {
  if (!writesObjectsOf(a, NODES)) r.forbid(`unexpected node subresource "${a.subresource}"`);
  if (a.name !== nodeName) r.forbid(`node "${nodeName}" is not allowed to modify node "${a.name}"`);
  if (a.operation === 'CREATE') admitNodeCreate(nodeName, a.object, r);
  if (a.operation === 'UPDATE' && a.oldObject) admitNodeUpdate(nodeName, a.object, a.oldObject, r);
}

function admitLease(nodeName: string, a: AdmissionAttributes, r: Refusal): void {
  if (a.namespace !== NODE_LEASE_NAMESPACE) r.forbid(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
  if (a.name !== nodeName) r.forbid('can only access node lease with the same name as the requesting node');
}

/** A mirror pod's single owner: this node's Node object, as controller, with its current uid. */
async function admitMirrorOwner(nodeName: string, a: AdmissionAttributes<Pod>, r: Refusal): Promise<void> {
  const owners = a.object.metadata?.ownerReferences ?? [];
  if (owners.length > 1) r.forbid(`node "${nodeName}" can only create pods with a single owner reference set to itself`);
  const owner = owners[0];
  if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== nodeName) {
    r.forbid(`node "${nodeName}" can only create pods with an owner reference set to itself`);
  }
  if (owner.controller !== true) r.forbid(`node "${nodeName}" can only create pods with a controller owner reference set to itself`);
  if (owner.blockOwnerDeletion === true) r.forbid(`node "${nodeName}" must not set blockOwnerDeletion on an owner reference`);
  const node = await a.ctx.objects.get(NODES, undefined, nodeName);
  if (!node) throw errors.notFound({ group: '', resource: 'nodes', name: nodeName });
  if (owner.uid !== node.metadata?.uid) r.forbid(`node ${nodeName} UID mismatch: expected ${owner.uid} got ${node.metadata?.uid ?? ''}`);
}

/**
 * A mirror pod: annotated, bound to this node, owned by this node's Node object, referencing no
 * other object (its ServiceAccount included: the pod strategy gives a mirror pod no default one).
 */
async function admitPodCreate(nodeName: string, a: AdmissionAttributes<Pod>, r: Refusal): Promise<void> {
  const pod = a.object;
  if (!isMirrorPod(pod)) r.forbid(`pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${nodeName}" can only create mirror pods`);
  if ((pod.spec?.nodeName ?? '') !== nodeName) r.forbid(`node "${nodeName}" can only create pods with spec.nodeName set to itself`);
  await admitMirrorOwner(nodeName, a, r);
  if (podReferences(pod, 'serviceaccounts').size > 0) r.forbid(`node "${nodeName}" can not create pods that reference a service account`);
  if (podReferences(pod, 'secrets').size > 0) r.forbid(`node "${nodeName}" can not create pods that reference secrets`);
  if (podReferences(pod, 'configmaps').size > 0) r.forbid(`node "${nodeName}" can not create pods that reference configmaps`);
  if (projectedSources(pod).some((p) => p.clusterTrustBundle != null)) r.forbid(`node "${nodeName}" can not create pods that reference clustertrustbundles`);
  if ((pod.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim != null)) {
    r.forbid(`node "${nodeName}" can not create pods that reference persistentvolumeclaims`);
  }
}

async function admitPod(nodeName: string, a: AdmissionAttributes, r: Refusal): Promise<void> {
  if (!writesObjectsOf(a, PODS)) r.forbid(`unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
  const boundHere = (pod: Pod | undefined): boolean => (pod?.spec?.nodeName ?? '') === nodeName;
  if (a.subresource === 'status') {
    if (a.operation !== 'UPDATE') r.forbid(`unexpected operation "${a.operation}"`);
    if (!boundHere(a.oldObject)) r.forbid(`node "${nodeName}" can only update pod status for pods with spec.nodeName set to itself`);
    if (!deepEqual(a.object.metadata?.labels ?? {}, a.oldObject?.metadata?.labels ?? {})) r.forbid(`node "${nodeName}" cannot update labels through pod status`);
    return;
  }
  if (a.operation === 'CREATE') return admitPodCreate(nodeName, a, r);
  if (a.operation === 'DELETE') {
    if (!boundHere(a.oldObject)) r.forbid(`node "${nodeName}" can only delete pods with spec.nodeName set to itself`);
    return;
  }
  r.forbid(`unexpected operation "${a.operation}", node "${nodeName}" can only create and delete mirror pods`);
}

/** serviceaccounts/token creates carry the subresource's kind, a TokenRequest. */
const createsTokenRequest = (a: AdmissionAttributes): a is AdmissionAttributes<TokenRequest> =>
  a.operation === 'CREATE' && a.subresource === 'token' && a.info.group === '' && a.info.plural === 'serviceaccounts';

/** The pod a node's TokenRequest is bound to: name and uid both required. */
function boundPod(ref: BoundObjectReference, r: Refusal): { name: string; uid: string } {
  const name = ref.name ?? '';
  const uid = ref.uid ?? '';
  if (ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || name === '') r.forbid('node requested token not bound to a pod');
  if (uid === '') r.forbid('node requested token with a pod binding without a uid');
  return { name, uid };
}

const VERB_REQUEST_AUDIENCE = 'request-serviceaccounts-token-audience';

/**
 * ServiceAccountNodeAudienceRestriction (upstream, on since 1.33): one audience at most, and one a
 * projected token volume of the pod names (none asked: the API's, as kube-api-access names none),
 * unless RBAC grants `request-serviceaccounts-token-audience` on it; otherwise a node could mint its
 * pods' tokens for any outside service (a cloud's STS, Vault) they never use. CSI drivers' token
 * audiences, upstream's other source, do not exist here: no CSIDriver is served.
 */
async function admitTokenAudience(a: AdmissionAttributes<TokenRequest>, pod: Pod, r: Refusal): Promise<void> {
  const audiences = a.object.spec?.audiences ?? [];
  if (audiences.length > 1) r.forbid('node may only request 0 or 1 audiences');
  const audience = audiences[0] ?? '';
  if (projectedSources(pod).some((s) => s.serviceAccountToken != null && text(record(s.serviceAccountToken).audience) === audience)) return;
  const decision = await a.ctx.authorizer
    .authorize({ user: a.ctx.user, verb: VERB_REQUEST_AUDIENCE, apiGroup: '', resource: audience, name: a.name, namespace: a.namespace })
    .catch(() => ({ allowed: false }));
  if (!decision.allowed) {
    r.forbid(`audience ${JSON.stringify(audience)} not found in pod spec volume, ${a.ctx.user.username} is not authorized to request tokens for this audience`);
  }
}

/** A node's TokenRequest must be bound to a pod that runs on it, by uid (it cannot outlive the pod), for an audience the pod uses. */
async function admitTokenRequest(nodeName: string, a: AdmissionAttributes, r: Refusal): Promise<void> {
  if (!createsTokenRequest(a)) return;
  const { name, uid } = boundPod(a.object.spec?.boundObjectRef ?? {}, r);
  const pod = await a.ctx.objects.get(PODS, a.namespace, name);
  if (!pod) throw errors.notFound({ group: '', resource: 'pods', name });
  if (uid !== pod.metadata?.uid) {
    r.forbid(`the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`);
  }
  if ((pod.spec?.nodeName ?? '') !== nodeName) r.forbid('node requested token bound to a pod scheduled on a different node');
  await admitTokenAudience(a, pod, r);
}

export function nodeRestriction(): AdmissionPlugin {
  return {
    name: 'NodeRestriction',
    validate(a) {
      const id = nodeIdentity(a.ctx.user);
      return id.isNode ? admitNodeRequest(id.nodeName, a) : undefined;
    },
  };
}

/**
 * A node's CSR for a kubelet signer names itself (upstream since 1.34, unless
 * AllowInsecureKubeletCertificateSigningRequests): a node must not even ask for another node's
 * identity, which one mistaken approval would hand it.
 */
function admitCsr(nodeName: string, a: AdmissionAttributes, r: Refusal): void {
  if (a.operation !== 'CREATE' || a.subresource !== '') return;
  const spec = (a.object.spec ?? {}) as Partial<CertificateSigningRequestSpec>;
  if (spec.signerName !== SIGNER_KUBELET_SERVING && spec.signerName !== SIGNER_KUBE_APISERVER_CLIENT_KUBELET) return;
  let commonName: string | undefined;
  try {
    // Validation verified the self-signature before admission: only the subject is read here.
    commonName = parseCertificateRequestPem(bytesText(spec.request), { verifySignature: false }).subject.commonName;
  } catch (err) {
    r.forbid(`unable to parse csr: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (commonName !== `system:node:${nodeName}`) r.forbid(`can only create a node CSR with CN=system:node:${nodeName}`);
}

/** NodeRestriction's checks of a request by the node `nodeName`. */
async function admitNodeRequest(nodeName: string, a: AdmissionAttributes): Promise<void> {
  const r = new Refusal(a);
  if (nodeName === '') r.forbid(`could not determine node from user "${a.ctx.user.username}"`);
  const gr = `${a.info.plural}.${a.info.group}`;
  if (gr === 'nodes.') admitNode(nodeName, a, r);
  else if (gr === 'leases.coordination.k8s.io') admitLease(nodeName, a, r);
  else if (gr === 'pods.') await admitPod(nodeName, a, r);
  else if (gr === 'serviceaccounts.') await admitTokenRequest(nodeName, a, r);
  else if (gr === 'certificatesigningrequests.certificates.k8s.io') admitCsr(nodeName, a, r);
  else if (gr === 'podcertificaterequests.certificates.k8s.io') await admitPodCertificateRequest(nodeName, a, (m) => r.forbid(m));
}
