/**
 * Wrongly typed fields are refused at decode as kube-apiserver 1.32 refuses them (issue 13): a create
 * or update body gets 400 BadRequest with the Go JSON decoder's UnmarshalTypeError text; a JSON or
 * merge patch whose result is mistyped gets 422 against `patch` with the same text; a strategic merge
 * patch the unstructured converter's text; an apply configuration structured-merge-diff's. Values
 * Go accepts (int-or-string, Quantity, RawExtension, null) still go through. One row per field.
 */
import path from 'node:path';
import { raw } from '../helpers/http.js';
import { kubectlWith, manifest } from '../kubectl/kubectl.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await raw(s, 'POST', SA, { body: { metadata: { name: 'existing' } } });
  await raw(s, 'POST', LEASES, { body: { metadata: { name: 'l' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 10 } } });
  await raw(s, 'POST', `${NS}/services`, { body: { metadata: { name: 'web' }, spec: { ports: [{ port: 80, targetPort: 8080 }] } } });
});
afterAll(async () => {
  await s.close();
});

const NS = '/api/v1/namespaces/default';
const SA = `${NS}/serviceaccounts`;
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CR = '/apis/apps/v1/namespaces/default/controllerrevisions';
const REQUEST = Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----\n').toString('base64');
const csr = (spec: Record<string, unknown>): Record<string, unknown> => ({ metadata: { name: 'c' }, spec: { request: REQUEST, signerName: 'example.com/s', ...spec } });
const pod = (container: Record<string, unknown>): Record<string, unknown> => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i', ...container }] } });
const svc = (port: Record<string, unknown>): Record<string, unknown> => ({ metadata: { name: 'svc' }, spec: { ports: [{ port: 80, ...port }] } });

/** [kind, collection URL, body, Go's error after `<Kind> in version "v1" cannot be handled as a <Kind>: json: cannot unmarshal `]. */
const REFUSED: [string, string, Record<string, unknown>, string][] = [
  ['ServiceAccount', SA, { metadata: { name: 'a' }, secrets: 'x' }, 'string into Go struct field ServiceAccount.secrets of type []v1.ObjectReference'],
  ['ServiceAccount', SA, { metadata: { name: 'a' }, secrets: [{ name: 1 }] }, 'number into Go struct field ObjectReference.secrets.name of type string'],
  ['ServiceAccount', SA, { metadata: { name: 'a' }, imagePullSecrets: {} }, 'object into Go struct field ServiceAccount.imagePullSecrets of type []v1.LocalObjectReference'],
  ['ServiceAccount', SA, { metadata: { name: 'a' }, automountServiceAccountToken: 'yes' }, 'string into Go struct field ServiceAccount.automountServiceAccountToken of type bool'],
  ['ServiceAccount', SA, { metadata: 'x' }, 'string into Go struct field ServiceAccount.metadata of type v1.ObjectMeta'],
  ['ServiceAccount', SA, { metadata: { name: 'a', ownerReferences: [{ controller: 'yes' }] } }, 'string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool'],
  ['ServiceAccount', SA, { metadata: { name: 'a', generation: 1.5 } }, 'number 1.5 into Go struct field ObjectMeta.metadata.generation of type int64'],
  ['Secret', `${NS}/secrets`, { metadata: { name: 'a' }, data: 'x' }, 'string into Go struct field Secret.data of type map[string][]uint8'],
  ['Secret', `${NS}/secrets`, { metadata: { name: 'a' }, data: { k: 1 } }, 'number into Go struct field Secret.data of type []uint8'],
  ['Secret', `${NS}/secrets`, { metadata: { name: 'a' }, type: 1 }, 'number into Go struct field Secret.type of type v1.SecretType'],
  ['ConfigMap', `${NS}/configmaps`, { metadata: { name: 'a' }, data: { k: true } }, 'bool into Go struct field ConfigMap.data of type string'],
  ['ConfigMap', `${NS}/configmaps`, { metadata: { name: 'a' }, binaryData: [] }, 'array into Go struct field ConfigMap.binaryData of type map[string][]uint8'],
  ['Lease', LEASES, { metadata: { name: 'a' }, spec: 'x' }, 'string into Go struct field Lease.spec of type v1.LeaseSpec'],
  ['Lease', LEASES, { metadata: { name: 'a' }, spec: { holderIdentity: 1 } }, 'number into Go struct field LeaseSpec.spec.holderIdentity of type string'],
  ['Lease', LEASES, { metadata: { name: 'a' }, spec: { leaseDurationSeconds: '10' } }, 'string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32'],
  ['Lease', LEASES, { metadata: { name: 'a' }, spec: { leaseDurationSeconds: 1.5 } }, 'number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32'],
  ['Lease', LEASES, { metadata: { name: 'a' }, spec: { leaseTransitions: 3000000000 } }, 'number 3000000000 into Go struct field LeaseSpec.spec.leaseTransitions of type int32'],
  ['CertificateSigningRequest', CSRS, csr({ usages: 'client auth' }), 'string into Go struct field CertificateSigningRequestSpec.spec.usages of type []v1.KeyUsage'],
  ['CertificateSigningRequest', CSRS, csr({ expirationSeconds: '10' }), 'string into Go struct field CertificateSigningRequestSpec.spec.expirationSeconds of type int32'],
  ['CertificateSigningRequest', CSRS, csr({ extra: { a: 'x' } }), 'string into Go struct field CertificateSigningRequestSpec.spec.extra of type v1.ExtraValue'],
  ['CertificateSigningRequest', CSRS, csr({ signerName: ['x'] }), 'array into Go struct field CertificateSigningRequestSpec.spec.signerName of type string'],
  ['Role', `${RBAC}/namespaces/default/roles`, { metadata: { name: 'a' }, rules: {} }, 'object into Go struct field Role.rules of type []v1.PolicyRule'],
  ['Role', `${RBAC}/namespaces/default/roles`, { metadata: { name: 'a' }, rules: [{ verbs: 'get' }] }, 'string into Go struct field PolicyRule.rules.verbs of type []string'],
  ['ClusterRole', `${RBAC}/clusterroles`, { metadata: { name: 'a' }, aggregationRule: [] }, 'array into Go struct field ClusterRole.aggregationRule of type v1.AggregationRule'],
  ['RoleBinding', `${RBAC}/namespaces/default/rolebindings`, { metadata: { name: 'a' }, subjects: {} }, 'object into Go struct field RoleBinding.subjects of type []v1.Subject'],
  ['ClusterRoleBinding', `${RBAC}/clusterrolebindings`, { metadata: { name: 'a' }, roleRef: 'x' }, 'string into Go struct field ClusterRoleBinding.roleRef of type v1.RoleRef'],
  ['ControllerRevision', CR, { metadata: { name: 'a' }, revision: '1' }, 'string into Go struct field ControllerRevision.revision of type int64'],
  ['ControllerRevision', CR, { metadata: { name: 'a' }, revision: 1.5 }, 'number 1.5 into Go struct field ControllerRevision.revision of type int64'],
  ['Event', `${NS}/events`, { metadata: { name: 'a' }, involvedObject: 'x' }, 'string into Go struct field Event.involvedObject of type v1.ObjectReference'],
  ['Event', `${NS}/events`, { metadata: { name: 'a' }, involvedObject: {}, count: '1' }, 'string into Go struct field Event.count of type int32'],
  ['Event', '/apis/events.k8s.io/v1/namespaces/default/events', { metadata: { name: 'a' }, regarding: [] }, 'array into Go struct field Event.regarding of type v1.ObjectReference'],
  ['Namespace', '/api/v1/namespaces', { metadata: { name: 'a' }, spec: { finalizers: 'kubernetes' } }, 'string into Go struct field NamespaceSpec.spec.finalizers of type []v1.FinalizerName'],
  ['Service', `${NS}/services`, svc({ port: '80' }), 'string into Go struct field ServicePort.spec.ports.port of type int32'],
  ['Service', `${NS}/services`, svc({ targetPort: true }), 'bool into Go struct field ServicePort.spec.ports.targetPort of type int32'],
  ['Service', `${NS}/services`, svc({ targetPort: 1.5 }), 'number 1.5 into Go struct field ServicePort.spec.ports.targetPort of type int32'],
  ['Pod', `${NS}/pods`, { metadata: { name: 'p' }, spec: { containers: 'x' } }, 'string into Go struct field PodSpec.spec.containers of type []v1.Container'],
  ['Pod', `${NS}/pods`, pod({ ports: [{ containerPort: '80' }] }), 'string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32'],
  ['Node', '/api/v1/nodes', { metadata: { name: 'n' }, spec: { unschedulable: 'no' } }, 'string into Go struct field NodeSpec.spec.unschedulable of type bool'],
  ['TokenReview', '/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: 1 } }, 'number into Go struct field TokenReviewSpec.spec.token of type string'],
  ['SubjectAccessReview', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { user: 'u', groups: 'x' } }, 'string into Go struct field SubjectAccessReviewSpec.spec.groups of type []string'],
  ['SelfSubjectAccessReview', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { spec: { resourceAttributes: 'x' } },
    'string into Go struct field SelfSubjectAccessReviewSpec.spec.resourceAttributes of type v1.ResourceAttributes'],
  ['SelfSubjectRulesReview', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 1 } }, 'number into Go struct field SelfSubjectRulesReviewSpec.spec.namespace of type string'],
  ['TokenRequest', `${SA}/existing/token`, { spec: { audiences: ['a'], expirationSeconds: '3600' } }, 'string into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64'],
];

describe('a wrongly typed field in a create body is a 400 with the Go decoder\'s message, and nothing is stored', () => {
  it.each(REFUSED)('%s at %s: %j', async (kind, url, body, message) => {
    const before = s.store.currentRevision();
    const r = await raw(s, 'POST', url, { body });
    expect({ status: r.status, reason: r.json?.reason, message: r.json?.message }).toEqual({
      status: 400,
      reason: 'BadRequest',
      message: `${kind} in version "v1" cannot be handled as a ${kind}: json: cannot unmarshal ${message}`,
    });
    expect(s.store.currentRevision()).toBe(before);
  });
});

const QUANTITY = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

describe('Quantity fields take a number or a quantity string, nothing else', () => {
  it.each([
    ['a bool', pod({ resources: { limits: { cpu: true } } })],
    ['an object', pod({ resources: { requests: { memory: { v: 1 } } } })],
    ['a malformed string', pod({ resources: { limits: { cpu: 'lots' } } })],
  ])('%s', async (_name, body) => {
    const r = await raw(s, 'POST', `${NS}/pods`, { body });
    expect([r.status, r.json.message]).toEqual([400, `Pod in version "v1" cannot be handled as a Pod: ${QUANTITY}`]);
  });
});

describe('values Go accepts still go through', () => {
  it.each([
    ['int-or-string as a name', `${NS}/services`, { ...svc({ targetPort: 'http' }), metadata: { name: 'svc1' } }, 'spec.ports.0.targetPort', 'http'],
    ['int-or-string as a number', `${NS}/services`, { ...svc({ targetPort: 8080 }), metadata: { name: 'svc2' } }, 'spec.ports.0.targetPort', 8080],
    ['a Quantity as a number', `${NS}/pods`, { ...pod({ resources: { limits: { cpu: 1 } } }), metadata: { name: 'p1' } }, 'spec.containers.0.resources.limits.cpu', 1],
    ['a Quantity string', `${NS}/pods`, { ...pod({ resources: { limits: { memory: '64Mi' } } }), metadata: { name: 'p2' } }, 'spec.containers.0.resources.limits.memory', '64Mi'],
    ['RawExtension data of any JSON', CR, { metadata: { name: 'cr1' }, revision: 1, data: [1, 'x', { b: [true] }] }, 'data.2.b.0', true],
    ['an int64 past int32', CR, { metadata: { name: 'cr2' }, revision: 4294967296, data: {} }, 'revision', 4294967296],
    ['null for a struct', LEASES, { metadata: { name: 'l1' }, spec: null }, 'spec', undefined],
    ['null for a string', LEASES, { metadata: { name: 'l2' }, spec: { holderIdentity: null, leaseDurationSeconds: 5 } }, 'spec.holderIdentity', undefined],
    ['null for a list', SA, { metadata: { name: 'sa1' }, secrets: null }, 'secrets', undefined],
    ['a null list item is the zero struct', SA, { metadata: { name: 'sa2' }, secrets: [null, { name: 's' }] }, 'secrets.0', {}],
    ['a null string item is the empty string', `${RBAC}/namespaces/default/roles`, { metadata: { name: 'r1' }, rules: [{ verbs: ['get', null], resources: ['pods'], apiGroups: [''] }] }, 'rules.0.verbs.1', ''],
  ])('%s', async (_name, url, body, path, expected) => {
    const r = await raw(s, 'POST', url, { body });
    expect(r.status).toBe(201);
    const value = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], r.json);
    expect(value).toEqual(expected);
  });
});

describe('apiVersion and kind are read as strings before anything else', () => {
  it('a number for apiVersion is an unrecognized object (400), with the start of the body', async () => {
    const r = await raw(s, 'POST', SA, { body: '{"apiVersion":1,"metadata":{"name":"a"}}' });
    expect([r.status, r.json.reason, r.json.message]).toEqual([400, 'BadRequest',
      'the object provided is unrecognized (must be of type ServiceAccount): couldn\'t get version/kind; json parse error: ' +
        'json: cannot unmarshal number into Go struct field .apiVersion of type string ({"apiVersion":1,"metadata":{"n ...)']);
  });

  it('a merge patch making kind an object is an invalid patch (422)', async () => {
    const r = await raw(s, 'PATCH', `${SA}/existing`, { body: '{"kind":{}}', contentType: 'application/merge-patch+json' });
    expect(r.status).toBe(422);
    expect(r.json.message).toMatch(/}": couldn't get version\/kind; json parse error: json: cannot unmarshal object into Go struct field \.kind of type string$/);
  });
});

describe('a DeleteOptions body is checked by the same walk', () => {
  it.each([
    [{ dryRun: [1] }, 'number into Go struct field DeleteOptions.dryRun of type string'],
    [{ gracePeriodSeconds: 1.5 }, 'number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64'],
    [{ propagationPolicy: 1 }, 'number into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation'],
    [{ orphanDependents: 'yes' }, 'string into Go struct field DeleteOptions.orphanDependents of type bool'],
    [{ preconditions: { uid: 1 } }, 'number into Go struct field Preconditions.preconditions.uid of type string'],
  ])('%j', async (body, message) => {
    const r = await raw(s, 'DELETE', `${SA}/existing`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', ...body } });
    expect([r.status, r.json.reason, r.json.message]).toEqual([400, 'BadRequest',
      `DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal ${message}`]);
    expect((await raw(s, 'GET', `${SA}/existing`)).status).toBe(200);
  });
});

describe('a YAML body is checked as a JSON one', () => {
  it('is a 400 with the same message', async () => {
    const r = await raw(s, 'POST', LEASES, { body: 'metadata:\n  name: y\nspec:\n  leaseDurationSeconds: "10"\n', contentType: 'application/yaml' });
    expect([r.status, r.json.message]).toEqual([400,
      'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32']);
  });
});

describe('an update body is checked as a create body', () => {
  it('PUT with a mistyped field is a 400 and the object is unchanged', async () => {
    const before = (await raw(s, 'GET', `${SA}/existing`)).json;
    const r = await raw(s, 'PUT', `${SA}/existing`, { body: { ...before, secrets: 'x' } });
    expect([r.status, r.json.reason, r.json.message]).toEqual([400, 'BadRequest',
      'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: json: cannot unmarshal string into Go struct field ServiceAccount.secrets of type []v1.ObjectReference']);
    expect((await raw(s, 'GET', `${SA}/existing`)).json).toEqual(before);
  });
});

const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const JSONP = 'application/json-patch+json';

/** [case, URL, content type, patch, the error after `patch: Invalid value: "<patched object>": `]. */
const PATCHES: [string, string, string, unknown, string][] = [
  ['merge', `${SA}/existing`, MERGE, { secrets: 'x' }, 'json: cannot unmarshal string into Go struct field ServiceAccount.secrets of type []v1.ObjectReference'],
  ['merge into metadata', `${SA}/existing`, MERGE, { metadata: { labels: 'x' } }, 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string'],
  ['json', `${LEASES}/l`, JSONP, [{ op: 'replace', path: '/spec/holderIdentity', value: 1 }], 'json: cannot unmarshal number into Go struct field LeaseSpec.spec.holderIdentity of type string'],
  ['json, a fraction for an int32', `${LEASES}/l`, JSONP, [{ op: 'replace', path: '/spec/leaseDurationSeconds', value: 2.5 }],
    'json: cannot unmarshal number 2.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32'],
  ['strategic, a list as a string', `${SA}/existing`, SMP, { secrets: 'x' }, 'cannot restore slice from string'],
  ['strategic, an int for a string', `${LEASES}/l`, SMP, { spec: { holderIdentity: 1 } }, 'cannot convert int64 to string'],
  ['strategic, a string for an int32', `${LEASES}/l`, SMP, { spec: { leaseDurationSeconds: 'x' } }, 'unrecognized type: int32'],
  ['strategic, a string for a struct', `${LEASES}/l`, SMP, { spec: 'x' }, 'cannot restore struct from: string'],
  ['strategic, an int32 out of range (upstream truncates it)', `${LEASES}/l`, SMP, { spec: { leaseTransitions: 3000000000 } },
    'json: cannot unmarshal number 3000000000 into Go struct field LeaseSpec.spec.leaseTransitions of type int32'],
  ['strategic, a number for a MicroTime', `${LEASES}/l`, SMP, { spec: { renewTime: 5 } }, 'json: cannot unmarshal number into Go value of type string'],
  ['strategic, a bool for an int-or-string', `${NS}/services/web`, SMP, { spec: { ports: [{ port: 80, targetPort: true }] } },
    'json: cannot unmarshal bool into Go value of type int32'],
  ['merge, a bool for an int-or-string', `${NS}/services/web`, MERGE, { spec: { ports: [{ port: 80, targetPort: true }] } },
    'json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32'],
];

describe('a patch whose result is mistyped is upstream\'s invalid patch (422), and nothing changes', () => {
  it.each(PATCHES)('%s', async (_name, url, contentType, patch, detail) => {
    const before = (await raw(s, 'GET', url)).json;
    const r = await raw(s, 'PATCH', url, { body: JSON.stringify(patch), contentType });
    expect([r.status, r.json.reason]).toEqual([422, 'Invalid']);
    expect(r.json.message.startsWith(' "" is invalid: patch: Invalid value: "{')).toBe(true);
    expect(r.json.message.endsWith(`}": ${detail}`)).toBe(true);
    expect(r.json.details.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'patch', message: expect.stringMatching(/^Invalid value: /) }]);
    expect((await raw(s, 'GET', url)).json).toEqual(before);
  });
});

describe('an apply configuration with mistyped fields', () => {
  it('is refused with structured-merge-diff\'s typed patch errors (400; 500 upstream, see docs/compatibility.md)', async () => {
    const body = JSON.stringify({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l' },
      spec: { holderIdentity: 1, leaseDurationSeconds: 'x', acquireTime: true, bogus: 1 },
    });
    const r = await raw(s, 'PATCH', `${LEASES}/l?fieldManager=m`, { body, contentType: 'application/apply-patch+yaml' });
    expect([r.status, r.json.reason]).toEqual([400, 'BadRequest']);
    expect(r.json.message).toBe(
      'failed to create typed patch object (/l; coordination.k8s.io/v1, Kind=Lease): errors:\n' +
        '  .spec.holderIdentity: expected string, got &value.valueUnstructured{Value:1}\n' +
        '  .spec.leaseDurationSeconds: expected numeric (int or float), got string\n' +
        '  .spec.acquireTime: expected string, got &value.valueUnstructured{Value:true}\n' +
        '  .spec.bogus: field not declared in schema',
    );
  });

  it('a fraction for an int32, which structured-merge-diff takes as numeric, fails decoding the merged object (422)', async () => {
    const body = JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { leaseDurationSeconds: 1.5 } });
    const r = await raw(s, 'PATCH', `${LEASES}/l?fieldManager=m&force=true`, { body, contentType: 'application/apply-patch+yaml' });
    expect(r.status).toBe(422);
    expect(r.json.message.endsWith('}": json: cannot unmarshal number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32')).toBe(true);
  });

  it('a single mistyped list is one error', async () => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'existing' }, secrets: 'x' });
    const r = await raw(s, 'PATCH', `${SA}/existing?fieldManager=m`, { body, contentType: 'application/apply-patch+yaml' });
    expect([r.status, r.json.message]).toEqual([400, 'failed to create typed patch object (/existing; /v1, Kind=ServiceAccount): .secrets: expected list, got &{x}']);
  });
});

describe('kubectl create -f of a mistyped manifest', () => {
  const text = 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: typo\nsecrets: oops\n';
  const expected = 'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: json: cannot unmarshal string into Go struct field ServiceAccount.secrets of type []v1.ObjectReference';

  it.each([[[] as string[]], [['--validate=false']]])('shows the server\'s decode error (%j)', async (flags) => {
    const r = await kubectlWith(s, ['create', '-f', manifest(s, 'typo.yaml', text), ...flags]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`Error from server (BadRequest): error when creating "${path.join(s.dataDir, 'typo.yaml')}": ${expected}`);
    expect((await raw(s, 'GET', `${SA}/typo`)).status).toBe(404);
  });
});
