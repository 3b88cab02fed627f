/**
 * Defaulting parity with kube-apiserver: what upstream's SetDefaults_* functions
 * (k8s.io/kubernetes pkg/apis/<group>/v1/defaults.go, run at decode time before validation) fill in,
 * one table per kind, each row naming the function it mirrors. A kind whose v1 package registers no
 * defaulter has a row saying so, checking nothing is added.
 */
import { setPodDefaults } from '../../src/apiserver/registry/core/pod-defaults.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

type Body = Record<string, unknown>;
/** [upstream function, object sent, { dotted path: expected value after create }]. */
type Row = [string, Body, Record<string, unknown>];

const at = (obj: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v === null || typeof v !== 'object' ? undefined : (v as Record<string, unknown>)[k]), obj);

async function check(collection: string, rows: Row[]): Promise<void> {
  for (const [fn, body, expected] of rows) {
    const r = await raw(s, 'POST', collection, { body });
    expect([fn, r.status]).toEqual([fn, 201]);
    // Defaulting must not lose what the server sets around it.
    expect([fn, typeof r.json.metadata.uid, typeof r.json.metadata.creationTimestamp]).toEqual([fn, 'string', 'string']);
    for (const [path, value] of Object.entries(expected)) expect([fn, path, at(r.json, path)]).toEqual([fn, path, value]);
  }
}

const pod = (name: string, spec: Body): Body => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec } });

describe('core/v1 Pod', () => {
  const rows: Row[] = [
    ['SetDefaults_PodSpec', pod('p1', {}), {
      'spec.dnsPolicy': 'ClusterFirst', 'spec.restartPolicy': 'Always', 'spec.securityContext': {},
      'spec.terminationGracePeriodSeconds': 30, 'spec.schedulerName': 'default-scheduler',
    }],
    ['SetDefaults_PodSpec keeps what is set', pod('p2', { dnsPolicy: 'Default', restartPolicy: 'Never', terminationGracePeriodSeconds: 0 }), {
      'spec.dnsPolicy': 'Default', 'spec.restartPolicy': 'Never', 'spec.terminationGracePeriodSeconds': 0,
    }],
    ['SetDefaults_Pod (enableServiceLinks)', pod('p3', {}), { 'spec.enableServiceLinks': true }],
    ['SetDefaults_Container (tagged image: IfNotPresent)', pod('p4', {}), {
      'spec.containers.0.imagePullPolicy': 'IfNotPresent',
      'spec.containers.0.terminationMessagePath': '/dev/termination-log',
      'spec.containers.0.terminationMessagePolicy': 'File',
    }],
    ['SetDefaults_Container (no tag is latest: Always)', pod('p5', { containers: [{ name: 'c', image: 'registry:5000/busybox' }] }), {
      'spec.containers.0.imagePullPolicy': 'Always',
    }],
    ['SetDefaults_Container (:latest: Always)', pod('p6', { containers: [{ name: 'c', image: 'busybox:latest' }] }), {
      'spec.containers.0.imagePullPolicy': 'Always',
    }],
    ['SetDefaults_Container (digest: IfNotPresent)', pod('p7', { containers: [{ name: 'c', image: `busybox@sha256:${'a'.repeat(64)}` }] }), {
      'spec.containers.0.imagePullPolicy': 'IfNotPresent',
    }],
    ['SetDefaults_Container on initContainers', pod('p8', { initContainers: [{ name: 'i', image: 'busybox' }] }), {
      'spec.initContainers.0.imagePullPolicy': 'Always', 'spec.initContainers.0.terminationMessagePolicy': 'File',
    }],
    ['SetDefaults_ContainerPort', pod('p9', { containers: [{ name: 'c', image: 'busybox:1', ports: [{ containerPort: 80 }] }] }), {
      'spec.containers.0.ports.0.protocol': 'TCP',
    }],
    ['SetDefaults_Pod (requests from limits)', pod('p10', { containers: [{ name: 'c', image: 'busybox:1', resources: { limits: { cpu: '1' }, requests: { memory: '1Mi' } } }] }), {
      'spec.containers.0.resources.requests': { memory: '1Mi', cpu: '1' },
    }],
    ['SetDefaults_Probe and SetDefaults_HTTPGetAction', pod('p12', { containers: [{ name: 'c', image: 'busybox:1', livenessProbe: { httpGet: { port: 80 } } }] }), {
      'spec.containers.0.livenessProbe': { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
    }],
    ['setDefaults_Volume (no source: emptyDir) and SetDefaults_SecretVolumeSource / ConfigMapVolumeSource (defaultMode 0644)',
      pod('p13', { volumes: [{ name: 'v' }, { name: 's', secret: { secretName: 'x' } }, { name: 'c', configMap: { name: 'x' } }] }), {
        'spec.volumes.0.emptyDir': {}, 'spec.volumes.1.secret.defaultMode': 420, 'spec.volumes.2.configMap.defaultMode': 420,
      }],
    ['SetDefaults_HostPathVolumeSource, _ISCSIVolumeSource, _RBDVolumeSource, _AzureDiskVolumeSource, _ScaleIOVolumeSource (no emptyDir added)',
      pod('p14', { volumes: [
        { name: 'h', hostPath: { path: '/x' } },
        { name: 'i', iscsi: { targetPortal: '1.2.3.4:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 0 } },
        { name: 'r', rbd: { monitors: ['1.2.3.4:6789'], image: 'img' } },
        { name: 'a', azureDisk: { diskName: 'd', diskURI: 'https://example.com/d' } },
        { name: 's', scaleIO: { gateway: 'https://gw', system: 'sys', secretRef: { name: 'x' } } },
      ] }), {
        'spec.volumes.0.hostPath.type': '', 'spec.volumes.1.iscsi.iscsiInterface': 'default', 'spec.volumes.1.emptyDir': undefined,
        'spec.volumes.2.rbd': { monitors: ['1.2.3.4:6789'], image: 'img', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' },
        'spec.volumes.3.azureDisk': { diskName: 'd', diskURI: 'https://example.com/d', cachingMode: 'ReadWrite', fsType: 'ext4', readOnly: false, kind: 'Shared' },
        'spec.volumes.4.scaleIO.storageMode': 'ThinProvisioned', 'spec.volumes.4.scaleIO.fsType': 'xfs',
      }],
    ['SetDefaults_ObjectFieldSelector (env, downwardAPI and projected items) and SetDefaults_ServiceAccountTokenProjection',
      pod('p15', {
        containers: [{ name: 'c', image: 'busybox:1', env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }],
        volumes: [
          { name: 'd', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
          { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 't' } }, { downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } }] } },
        ],
      }), {
        'spec.containers.0.env.0.valueFrom.fieldRef.apiVersion': 'v1',
        'spec.volumes.0.downwardAPI.items.0.fieldRef.apiVersion': 'v1',
        'spec.volumes.1.projected.sources.0.serviceAccountToken.expirationSeconds': 3600,
        'spec.volumes.1.projected.sources.1.downwardAPI.items.0.fieldRef.apiVersion': 'v1',
      }],
    ['SetDefaults_Pod (host network ports)', pod('p11', { hostNetwork: true, containers: [{ name: 'c', image: 'busybox:1', ports: [{ containerPort: 8080 }] }] }), {
      'spec.containers.0.ports.0.hostPort': 8080,
    }],
  ];
  it('fills what SetObjectDefaults_Pod fills', () => check('/api/v1/namespaces/default/pods', rows));

  // Ephemeral containers cannot be set on create (they come through pods/ephemeralcontainers, not served
  // here), so SetDefaults_Container on them is checked on the defaulter itself.
  it('SetDefaults_Container on ephemeralContainers; a create carrying them is refused as ValidatePodCreate does', async () => {
    const body = pod('p16', { ephemeralContainers: [{ name: 'e', image: 'busybox', ports: [{ containerPort: 1 }], resources: { limits: { cpu: '1' } } }] });
    const obj = structuredClone(body) as Parameters<typeof setPodDefaults>[0];
    setPodDefaults(obj);
    expect(at(obj, 'spec.ephemeralContainers.0')).toEqual({
      name: 'e', image: 'busybox', ports: [{ containerPort: 1, protocol: 'TCP' }], resources: { limits: { cpu: '1' } },
      imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
    });
    const r = await raw(s, 'POST', '/api/v1/namespaces/default/pods', { body });
    expect(r.status).toBe(422);
    expect(r.json.message).toContain('spec.ephemeralContainers: Forbidden: cannot be set on create');
  });

  it('defaults a patch result too (a container added by merge patch gets its defaults)', async () => {
    const r = await raw(s, 'PATCH', '/api/v1/namespaces/default/pods/p1', {
      body: { spec: { terminationGracePeriodSeconds: null } },
      contentType: 'application/merge-patch+json',
    });
    expect(r.status).toBe(200);
    expect(r.json.spec.terminationGracePeriodSeconds).toBe(30);
  });
});

describe('core/v1 Secret, Namespace, ServiceAccount', () => {
  it('Secret: SetDefaults_Secret (type Opaque)', () =>
    check('/api/v1/namespaces/default/secrets', [['SetDefaults_Secret', { metadata: { name: 's1' } }, { type: 'Opaque' }]]));

  it('Namespace: SetDefaults_Namespace (name label) and SetDefaults_NamespaceStatus (phase Active)', () =>
    check('/api/v1/namespaces', [
      ['SetDefaults_Namespace', { metadata: { name: 'defaults-ns', labels: { team: 'a' } } }, {
        'metadata.labels': { team: 'a', 'kubernetes.io/metadata.name': 'defaults-ns' },
      }],
      ['SetDefaults_NamespaceStatus', { metadata: { name: 'defaults-ns2' } }, { 'status.phase': 'Active' }],
    ]));

  it('ServiceAccount: core/v1 has no defaulter for it; nothing is added', () =>
    check('/api/v1/namespaces/default/serviceaccounts', [
      ['(none)', { metadata: { name: 'sa1' } }, { secrets: undefined, automountServiceAccountToken: undefined, imagePullSecrets: undefined }],
    ]));
});

describe('authentication.k8s.io/v1 TokenRequest', () => {
  it('SetDefaults_TokenRequestSpec: expirationSeconds 3600', async () => {
    await raw(s, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'tok' } } });
    const r = await raw(s, 'POST', '/api/v1/namespaces/default/serviceaccounts/tok/token', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
    });
    expect(r.status).toBe(201);
    expect(r.json.spec.expirationSeconds).toBe(3600);
  });
});

describe('kinds whose v1 package registers no defaulter', () => {
  it('coordination.k8s.io/v1 Lease (none): nothing is added', () =>
    check('/apis/coordination.k8s.io/v1/namespaces/default/leases', [['(none)', { metadata: { name: 'l1' }, spec: {} }, { spec: {} }]]));

  it('apps/v1 ControllerRevision (none): nothing is added', () =>
    check('/apis/apps/v1/namespaces/default/controllerrevisions', [
      ['(none)', { metadata: { name: 'cr1' }, revision: 1, data: { a: 1 } }, { data: { a: 1 }, revision: 1 }],
    ]));

  it('rbac.authorization.k8s.io/v1 ClusterRole: no defaulter beyond bindings and subjects (tested in test/auth/rbac-defaults.test.ts)', () =>
    check('/apis/rbac.authorization.k8s.io/v1/clusterroles', [
      ['(none)', { metadata: { name: 'defaults-role' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }, {
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
      }],
    ]));
});
