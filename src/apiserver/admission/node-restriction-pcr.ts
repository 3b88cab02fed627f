/**
 * NodeRestriction for PodCertificateRequests (upstream's admitPodCertificateRequest): a kubelet may
 * only create requests, never update them or write their status, and only for a pod that exists, is
 * bound to it, is not a mirror pod, and whose pod, ServiceAccount and Node UIDs are the ones named.
 * The signer must be one a podCertificate projected volume of the pod names, unless the node is
 * authorized for `request-podcertificate-signer` on it (upstream's defense in depth since 1.37), so a
 * compromised node cannot mint identities from signers its pods never asked for.
 *
 * Upstream answers a UID mismatch or a missing object with a plain error (a 500, as informer lag can
 * cause them); here every refusal is a 403 with upstream's text, since a client error is never a 500.
 */
import type { Node } from '../../api/nodes.js';
import type { PodCertificateRequestWire } from '../../api/pod-certificates.js';
import { isMirrorPod, type Pod } from '../../api/pods.js';
import { findResource, type ResourceInfo, type ResourceOf } from '../../api/resources.js';
import { record, records, text } from '../../lib/json.js';
import { type AdmissionAttributes, writesObjectsOf } from '../registry/generic/admission.js';
import { PODS } from './pods.js';

const VERB_REQUEST_SIGNER = 'request-podcertificate-signer';

function resource(group: string, plural: string): ResourceInfo {
  const found = findResource(group, 'v1', plural);
  if (!found) throw new Error(`${plural} missing from RESOURCES`);
  return found;
}
const NODES: ResourceOf<Node> = resource('', 'nodes');
const SERVICE_ACCOUNTS = resource('', 'serviceaccounts');
const PCRS: ResourceOf<PodCertificateRequestWire> = resource('certificates.k8s.io', 'podcertificaterequests');

/** The signer names of the pod's podCertificate projected volume sources (free-form in the schema, so read with care). */
export function podCertificateSigners(pod: Pod): Set<string> {
  const out = new Set<string>();
  for (const v of pod.spec?.volumes ?? []) {
    for (const src of records(record(v.projected).sources)) {
      const signer = text(record(src.podCertificate).signerName);
      if (signer) out.add(signer);
    }
  }
  return out;
}

type Forbid = (message: string) => never;
const q = (s: string | undefined): string => JSON.stringify(s ?? '');

interface Request {
  a: AdmissionAttributes<PodCertificateRequestWire>;
  spec: NonNullable<PodCertificateRequestWire['spec']>;
  namespace: string;
  /** `"namespace/pod"`, as upstream quotes it. */
  podRef: string;
  forbid: Forbid;
}

/** The node named is the requesting node, with its current UID. */
async function checkNode(r: Request, nodeName: string): Promise<void> {
  const { spec } = r;
  if ((spec.nodeName ?? '') !== nodeName) r.forbid(`PodCertificateRequest.Spec.NodeName=${q(spec.nodeName)}, which is not the requesting node ${q(nodeName)}`);
  const node = await r.a.ctx.objects.get(NODES, undefined, nodeName);
  if (!node) r.forbid(`while retrieving node ${q(nodeName)} named in the PodCertificateRequest: nodes ${q(nodeName)} not found`);
  if ((node.metadata?.uid ?? '') !== (spec.nodeUID ?? '')) {
    r.forbid(`PodCertificateRequest for pod ${r.podRef} names node UID ${q(spec.nodeUID)}, inconsistent with the running node (${q(node.metadata?.uid)})`);
  }
}

/** The pod exists with the UID named, is bound to this node and is not a mirror pod. */
async function checkPod(r: Request, nodeName: string): Promise<Pod> {
  const { spec, podRef } = r;
  const pod = await r.a.ctx.objects.get(PODS, r.namespace, spec.podName ?? '');
  if (!pod) r.forbid(`while retrieving pod ${podRef} named in the PodCertificateRequest: pods ${q(spec.podName)} not found`);
  if ((pod.metadata?.uid ?? '') !== (spec.podUID ?? '')) {
    r.forbid(`PodCertificateRequest for pod ${podRef} contains pod UID (${q(spec.podUID)}) which differs from running pod ${q(pod.metadata?.uid)}`);
  }
  if ((pod.spec?.nodeName ?? '') !== nodeName) r.forbid(`pod ${podRef} is not running on node ${q(nodeName)} named in the PodCertificateRequest`);
  if (isMirrorPod(pod)) r.forbid(`pod ${podRef} is a mirror pod`);
  return pod;
}

/** The ServiceAccount named is the pod's, with its current UID. */
async function checkServiceAccount(r: Request, pod: Pod): Promise<void> {
  const { spec, podRef } = r;
  const saName = spec.serviceAccountName ?? '';
  const podSa = pod.spec?.serviceAccountName ?? '';
  if (saName !== podSa) r.forbid(`PodCertificateRequest for pod ${podRef} contains serviceAccountName (${q(saName)}) that differs from running pod (${q(podSa)})`);
  const sa = await r.a.ctx.objects.get(SERVICE_ACCOUNTS, r.namespace, saName);
  if (!sa) r.forbid(`while retrieving service account "${r.namespace}/${saName}" named in the PodCertificateRequest: serviceaccounts ${q(saName)} not found`);
  if ((sa.metadata?.uid ?? '') !== (spec.serviceAccountUID ?? '')) {
    r.forbid(`PodCertificateRequest for pod ${podRef} names service account UID ${q(spec.serviceAccountUID)}, which differs from the running service account (${q(sa.metadata?.uid)})`);
  }
}

/** The signer is one a podCertificate volume of the pod names, or the node is authorized to request it anyway. */
async function checkSigner(r: Request, pod: Pod): Promise<void> {
  const signerName = r.spec.signerName ?? '';
  if (podCertificateSigners(pod).has(signerName)) return;
  const decision = await r.a.ctx.authorizer
    .authorize({ user: r.a.ctx.user, verb: VERB_REQUEST_SIGNER, apiGroup: '', resource: signerName, namespace: r.namespace })
    .catch(() => ({ allowed: false }));
  if (!decision.allowed) r.forbid(`pod ${r.podRef} does not mount a podCertificate projected volume for signer ${q(signerName)}`);
}

export async function admitPodCertificateRequest(nodeName: string, a: AdmissionAttributes, forbid: Forbid): Promise<void> {
  if (a.operation !== 'CREATE') forbid(`unexpected operation ${a.operation}`);
  // Dispatched here for podcertificaterequests, so only a subresource fails the guard.
  if (a.subresource !== '' || !writesObjectsOf(a, PCRS)) forbid(`unexpected subresource ${a.subresource}`);
  const spec = a.object.spec ?? {};
  const namespace = a.namespace ?? '';
  const r: Request = { a, spec, namespace, podRef: `"${namespace}/${spec.podName ?? ''}"`, forbid };
  await checkNode(r, nodeName);
  const pod = await checkPod(r, nodeName);
  await checkServiceAccount(r, pod);
  await checkSigner(r, pod);
}
