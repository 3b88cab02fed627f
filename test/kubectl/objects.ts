/** One object of every kind the server lists, as manifests kubectl can create. */
import { RESOURCES, type ResourceInfo } from '../../src/api/resources.js';
import { b64, csrPem, testCa } from '../csr/helpers.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { createStubPkcs10Request } from '../../src/pki/pod-certificate-key.js';

export const NS = 'kt';

export interface Sample {
  info: ResourceInfo;
  name: string;
  manifest: Record<string, unknown>;
}

function find(group: string, plural: string, version?: string): ResourceInfo {
  const info = RESOURCES.find((r) => r.group === group && r.plural === plural && (version === undefined || r.version === version));
  if (!info) throw new Error(`no resource ${plural}.${group}`);
  return info;
}

const versionsOf = (info: ResourceInfo): number => RESOURCES.filter((r) => r.group === info.group && r.plural === info.plural).length;

/**
 * The kind's resource argument for kubectl: `plural.group` (just the plural for core), and
 * `plural.version.group` for a kind served in several versions, so each version is read as itself.
 */
export const resourceArg = (info: ResourceInfo): string =>
  !info.group ? info.plural : versionsOf(info) > 1 ? `${info.plural}.${info.version}.${info.group}` : `${info.plural}.${info.group}`;

/** What `-o name` prints: lower-case kind, qualified by group. */
export const nameOf = (info: ResourceInfo, name: string): string =>
  `${info.kind.toLowerCase()}${info.group ? `.${info.group}` : ''}/${name}`;

/** A PodCertificateRequest an admin may create (NodeRestriction only binds nodes to real pods). */
async function pcrSample(): Promise<Record<string, unknown>> {
  const stub = await createStubPkcs10Request(generateKeyPair('ECDSA-P256').privateKeyPem);
  const spec = { signerName: 'example.com/workload', podName: 'p1', podUID: 'uid-p1', serviceAccountName: 'sa1', serviceAccountUID: 'uid-sa1' };
  return { spec: { ...spec, nodeName: 'kt-node1', nodeUID: 'uid-node1', stubPKCS10Request: stub.toString('base64') } };
}

export async function samples(): Promise<Sample[]> {
  const rbac = 'rbac.authorization.k8s.io';
  const ca = (await testCa()).certPem;
  // [group, plural, name, body, version when the kind is served in several]
  const list: [string, string, string, Record<string, unknown>, string?][] = [
    ['', 'namespaces', NS, {}],
    ['', 'serviceaccounts', 'sa1', { automountServiceAccountToken: false }],
    ['', 'secrets', 's1', { type: 'Opaque', stringData: { user: 'admin' } }],
    ['', 'configmaps', 'cm1', { data: { key: 'value' } }],
    ['', 'services', 'svc1', { spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } }],
    ['', 'pods', 'p1', { spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } }],
    ['', 'nodes', 'kt-node1', {}],
    [
      '',
      'events',
      'ev1',
      { involvedObject: { kind: 'Pod', name: 'p1', namespace: NS }, reason: 'Started', message: 'started', type: 'Normal', source: { component: 'kubelet' } },
    ],
    [
      'events.k8s.io',
      'events',
      'ev2',
      {
        eventTime: '2024-05-01T10:00:00.000000Z',
        reportingController: 'example.com/ctl',
        reportingInstance: 'ctl-1',
        action: 'Sync',
        reason: 'Synced',
        type: 'Normal',
        regarding: { kind: 'Pod', name: 'p1', namespace: NS },
      },
    ],
    ['coordination.k8s.io', 'leases', 'l1', { spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } }],
    ['apps', 'controllerrevisions', 'cr1', { revision: 1, data: { spec: { x: 1 } } }],
    [
      'certificates.k8s.io',
      'certificatesigningrequests',
      'kt-csr1',
      { spec: { request: b64(await csrPem()), signerName: 'example.com/signer', usages: ['client auth'] } },
    ],
    ['certificates.k8s.io', 'clustertrustbundles', 'kt-ctb0', { spec: { trustBundle: ca } }, 'v1'],
    ['certificates.k8s.io', 'clustertrustbundles', 'kt-ctb1', { spec: { trustBundle: ca } }, 'v1beta1'],
    ['certificates.k8s.io', 'clustertrustbundles', 'kt-ctb2', { spec: { trustBundle: ca } }, 'v1alpha1'],
    ['certificates.k8s.io', 'podcertificaterequests', 'kt-pcr1', await pcrSample(), 'v1'],
    ['certificates.k8s.io', 'podcertificaterequests', 'kt-pcr2', await pcrSample(), 'v1beta1'],
    [rbac, 'roles', 'r1', { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }],
    [
      rbac,
      'rolebindings',
      'rb1',
      { roleRef: { apiGroup: rbac, kind: 'Role', name: 'r1' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: rbac }] },
    ],
    [rbac, 'clusterroles', 'kt-cr1', { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }] }],
    [
      rbac,
      'clusterrolebindings',
      'kt-crb1',
      { roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'kt-cr1' }, subjects: [{ kind: 'Group', name: 'devs', apiGroup: rbac }] },
    ],
  ];
  return list.map(([group, plural, name, body, version]) => {
    const info = find(group, plural, version);
    const metadata: Record<string, unknown> = { name };
    if (info.namespaced) metadata.namespace = NS;
    return { info, name, manifest: { apiVersion: info.group ? `${info.group}/${info.version}` : info.version, kind: info.kind, metadata, ...body } };
  });
}
