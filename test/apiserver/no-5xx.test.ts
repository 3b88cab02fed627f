/**
 * No malformed request gets a 5xx. Walks the suite's bad-input cases (bad-input-cases.ts) and the
 * malformed requests the other suites send one at a time (query parameters, nesting, client bodies,
 * patches, DeleteOptions, other kinds), against one server, and asserts none is a 5xx (and any
 * refusal is a Status).
 */
import { raw, type RawOptions } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { BAD_INPUT_CASES, seedBadInput } from './bad-input-cases.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ storage: 'sqlite' });
  await seedBadInput(s);
  await raw(s, 'POST', `${CR}`, { body: { metadata: { name: 'cr' }, revision: 1, data: { a: 1 } } });
  await raw(s, 'POST', `${PODS}`, { body: { metadata: { name: 'pod' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } });
  await raw(s, 'POST', EV1, { body: { metadata: { name: 'ev' }, ...NEW_EVENT } });
});
afterAll(async () => {
  await s.close();
});

const SA = '/api/v1/namespaces/default/serviceaccounts';
const PODS = '/api/v1/namespaces/default/pods';
const CR = '/apis/apps/v1/namespaces/default/controllerrevisions';
const CSR = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const JSONP = 'application/json-patch+json';
const APPLY = 'application/apply-patch+yaml';
const EV1 = '/apis/events.k8s.io/v1/namespaces/default/events';
const EVC = '/api/v1/namespaces/default/events';
const NEW_EVENT = { eventTime: '2026-11-25T06:00:00.000000Z', reportingController: 'x.io/c', reportingInstance: 'i', action: 'A', reason: 'R', type: 'Normal' };
const token = (json: string): string => Buffer.from(json).toString('base64url');
const deep = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

const MALFORMED: [string, string, string, RawOptions][] = [
  // query parameters (query-params.test.ts)
  ['limit=abc', 'GET', `${SA}?limit=abc`, {}],
  ['limit empty', 'GET', `${SA}?limit=`, {}],
  ['limit out of range', 'GET', `${SA}?limit=99999999999999999999`, {}],
  ['timeoutSeconds=x on watch', 'GET', `${SA}?watch=1&timeoutSeconds=x`, {}],
  ['resourceVersion=abc', 'GET', `${SA}?resourceVersion=abc`, {}],
  ['resourceVersionMatch=Bogus', 'GET', `${SA}?resourceVersion=1&resourceVersionMatch=Bogus`, {}],
  ['garbage continue', 'GET', `${SA}?limit=1&continue=%%%garbage`, {}],
  ['bad label selector', 'GET', `${SA}?labelSelector=!!!`, {}],
  ['bad field selector on a watch', 'GET', `${SA}?watch=true&fieldSelector=spec.x%3Dy`, {}],
  ['sendInitialEvents on list', 'GET', `${SA}?sendInitialEvents=true`, {}],
  ['gracePeriodSeconds=x', 'DELETE', `${SA}/existing?gracePeriodSeconds=x`, {}],
  ['bad propagationPolicy', 'DELETE', `${SA}/existing?propagationPolicy=Sideways`, {}],
  ['dryRun=Bogus', 'POST', `${SA}?dryRun=Bogus`, { body: { metadata: { name: 'dry' } } }],
  ['over-long fieldManager', 'POST', `${SA}?fieldManager=${'m'.repeat(200)}`, { body: { metadata: { name: 'fm' } } }],
  ['force on a merge patch', 'PATCH', `${SA}/existing?force=true`, { body: {}, contentType: MERGE }],
  // nesting (nesting.test.ts)
  ['5,000-deep ControllerRevision', 'POST', CR, { body: `{"metadata":{"name":"deep"},"revision":1,"data":${deep(5000)}}` }],
  ['5,000-deep YAML', 'POST', CR, { body: `{"metadata":{"name":"deep"},"revision":1,"data":${deep(5000)}}`, contentType: 'application/yaml' }],
  ['5,000-deep merge patch', 'PATCH', `${CR}/cr`, { body: `{"data":${deep(5000)}}`, contentType: MERGE }],
  ['5,000-deep apply', 'PATCH', `${CR}/cr?fieldManager=x`, { body: `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"cr"},"data":${deep(5000)}}`, contentType: APPLY }],
  // bodies with the wrong shapes (client-bodies.test.ts)
  ['metadata a string', 'POST', SA, { body: { metadata: 'x' } }],
  ['labels a string', 'POST', SA, { body: { metadata: { name: 'l1', labels: 'x' } } }],
  ['label value a number', 'POST', SA, { body: { metadata: { name: 'l2', labels: { a: 1 } } } }],
  ['name a number', 'POST', SA, { body: { metadata: { name: 5 } } }],
  ['secrets a string', 'POST', SA, { body: { metadata: { name: 'l3' }, secrets: 'x' } }],
  ['secrets of numbers', 'POST', SA, { body: { metadata: { name: 'l4' }, secrets: [1, null] } }],
  ['ownerReferences of empties', 'POST', SA, { body: { metadata: { name: 'l5', ownerReferences: [{}, null] } } }],
  ['finalizers of numbers', 'POST', SA, { body: { metadata: { name: 'l6', finalizers: [1] } } }],
  ['annotations of objects', 'POST', SA, { body: { metadata: { name: 'l7', annotations: { a: { b: 1 } } } } }],
  ['managedFields a string', 'POST', SA, { body: { metadata: { name: 'l8', managedFields: 'x' } } }],
  ['creationTimestamp garbage', 'POST', SA, { body: { metadata: { name: 'l9', creationTimestamp: 'yesterday' } } }],
  ['protobuf garbage', 'POST', SA, { body: Buffer.from([0x6b, 0x38, 0x73, 0x00, 0xff, 0xff]), contentType: 'application/vnd.kubernetes.protobuf' }],
  ['YAML garbage', 'POST', SA, { body: ': : :\n\t- [', contentType: 'application/yaml' }],
  // patches
  ['merge patch not JSON', 'PATCH', `${SA}/existing`, { body: '{', contentType: MERGE }],
  ['merge patch an array', 'PATCH', `${SA}/existing`, { body: '[]', contentType: MERGE }],
  ['strategic patch with a bogus directive', 'PATCH', `${SA}/existing`, { body: { secrets: [{ $patch: 'bogus' }] }, contentType: SMP }],
  ['strategic patch list of lists', 'PATCH', `${PODS}/pod`, { body: { spec: { containers: [[1]] } }, contentType: SMP }],
  ['JSON patch unknown op', 'PATCH', `${SA}/existing`, { body: [{ op: 'frobnicate', path: '/a' }], contentType: JSONP }],
  ['JSON patch path without slash', 'PATCH', `${SA}/existing`, { body: [{ op: 'add', path: 'a', value: 1 }], contentType: JSONP }],
  ['JSON patch failing test', 'PATCH', `${SA}/existing`, { body: [{ op: 'test', path: '/metadata/name', value: 'other' }], contentType: JSONP }],
  ['JSON patch removing what is absent', 'PATCH', `${SA}/existing`, { body: [{ op: 'remove', path: '/x/y/z' }], contentType: JSONP }],
  ['JSON patch replacing the root with a number', 'PATCH', `${SA}/existing`, { body: [{ op: 'replace', path: '', value: 1 }], contentType: JSONP }],
  ['JSON patch making metadata a string', 'PATCH', `${SA}/existing`, { body: [{ op: 'replace', path: '/metadata', value: 'x' }], contentType: JSONP }],
  ['JSON patch making labels a number', 'PATCH', `${SA}/existing`, { body: [{ op: 'add', path: '/metadata/labels', value: 1 }], contentType: JSONP }],
  ['merge patch making labels a list', 'PATCH', `${SA}/existing`, { body: { metadata: { labels: [1] } }, contentType: MERGE }],
  ['merge patch setting a stale resourceVersion', 'PATCH', `${SA}/existing`, { body: { metadata: { resourceVersion: '1' } }, contentType: MERGE }],
  ['merge patch setting a garbage resourceVersion', 'PATCH', `${SA}/existing`, { body: { metadata: { resourceVersion: 'x' } }, contentType: MERGE }],
  ['apply without fieldManager', 'PATCH', `${SA}/existing`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'existing' } }, contentType: APPLY }],
  ['apply with another apiVersion', 'PATCH', `${SA}/existing?fieldManager=x`, { body: { apiVersion: 'v2', kind: 'ServiceAccount', metadata: { name: 'existing' } }, contentType: APPLY }],
  ['apply YAML garbage', 'PATCH', `${SA}/existing?fieldManager=x`, { body: ': : :\n\t- [', contentType: APPLY }],
  ['apply a list', 'PATCH', `${SA}/existing?fieldManager=x`, { body: '[1, 2]', contentType: APPLY }],
  ['patch of a missing object', 'PATCH', `${SA}/missing`, { body: {}, contentType: MERGE }],
  // DeleteOptions (client-bodies.test.ts)
  ['DeleteOptions not JSON', 'DELETE', `${SA}/existing`, { body: '{' }],
  ['DeleteOptions an array', 'DELETE', `${SA}/existing`, { body: '[]' }],
  ['DeleteOptions of another kind', 'DELETE', `${SA}/existing`, { body: { kind: 'Pod' } }],
  ['DeleteOptions gracePeriodSeconds a string', 'DELETE', `${SA}/existing`, { body: { gracePeriodSeconds: 'soon' } }],
  ['DeleteOptions preconditions a string', 'DELETE', `${SA}/existing`, { body: { preconditions: 'x' } }],
  ['DeleteOptions with a wrong uid precondition', 'DELETE', `${SA}/existing`, { body: { preconditions: { uid: 'nope' } } }],
  ['deletecollection with a bad body', 'DELETE', `${SA}?labelSelector=none%3Dnone`, { body: '{' }],
  // other kinds
  ['Pod with containers a string', 'POST', PODS, { body: { metadata: { name: 'p1' }, spec: { containers: 'x' } } }],
  ['Pod with null containers', 'POST', PODS, { body: { metadata: { name: 'p2' }, spec: { containers: [null] } } }],
  ['Pod with ports a string', 'POST', PODS, { body: { metadata: { name: 'p3' }, spec: { containers: [{ name: 'c', image: 'i', ports: 'x' }] } } }],
  ['Pod with resources a list', 'POST', PODS, { body: { metadata: { name: 'p4' }, spec: { containers: [{ name: 'c', image: 'i', resources: [] }] } } }],
  ['Pod with spec a string', 'POST', PODS, { body: { metadata: { name: 'p5' }, spec: 'x' } }],
  ['ControllerRevision revision a string', 'POST', CR, { body: { metadata: { name: 'r1' }, revision: 'x' } }],
  ['Secret data not base64', 'POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 's1' }, data: { a: '!!' } } }],
  ['Secret stringData of objects', 'POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 's2' }, stringData: { a: { b: 1 } } } }],
  ['ConfigMap data of numbers', 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'c1' }, data: { a: 1 } } }],
  ['Lease spec a string', 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', { body: { metadata: { name: 'l1' }, spec: 'x' } }],
  ['Lease renewTime garbage', 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', { body: { metadata: { name: 'l2' }, spec: { renewTime: 'noon' } } }],
  ['Namespace with a bad name', 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'Bad.Name' } } }],
  ['CSR with a garbage request', 'POST', CSR, { body: { metadata: { name: 'c1' }, spec: { request: 'x', signerName: 'example.com/x', usages: ['client auth'] } } }],
  ['CSR with spec a list', 'POST', CSR, { body: { metadata: { name: 'c2' }, spec: [] } }],
  ['TokenRequest expirationSeconds a string', 'POST', `${SA}/existing/token`, { body: { spec: { expirationSeconds: 'x' } } }],
  ['TokenRequest spec a string', 'POST', `${SA}/existing/token`, { body: { spec: 'x' } }],
  ['TokenReview without a token', 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { spec: null } }],
  ['SubjectAccessReview empty', 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: {} }],
  ['RoleBinding subjects a string', 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', { body: { metadata: { name: 'b' }, roleRef: { kind: 'Role', name: 'r' }, subjects: 'x' } }],
  ['ClusterRole rules of numbers', 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: { metadata: { name: 'cr-bad' }, rules: [1] } }],
  // wrongly typed fields at any depth, on create, update and every patch type (field-types.test.ts)
  ['Lease holderIdentity a number', 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', { body: { metadata: { name: 'l3' }, spec: { holderIdentity: 1 } } }],
  ['CSR usages a string', 'POST', CSR, { body: { metadata: { name: 'c3' }, spec: { request: 'eA==', signerName: 'example.com/x', usages: 'client auth' } } }],
  ['CSR expirationSeconds a string', 'POST', CSR, { body: { metadata: { name: 'c4' }, spec: { request: 'eA==', signerName: 'example.com/x', expirationSeconds: '10' } } }],
  ['Role rules an object', 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { body: { metadata: { name: 'r2' }, rules: {} } }],
  ['Service targetPort a bool', 'POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'svc' }, spec: { ports: [{ port: 80, targetPort: true }] } } }],
  ['Pod cpu limit an object', 'POST', PODS, { body: { metadata: { name: 'p6' }, spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { cpu: {} } } }] } } }],
  ['revision a fraction', 'POST', CR, { body: { metadata: { name: 'r2' }, revision: 1.5 } }],
  ['PUT with secrets a string', 'PUT', `${SA}/existing`, { body: { metadata: { name: 'existing' }, secrets: 'x' } }],
  ['merge patch making secrets a string', 'PATCH', `${SA}/existing`, { body: { secrets: 'x' }, contentType: MERGE }],
  ['strategic patch making secrets a number', 'PATCH', `${SA}/existing`, { body: { secrets: 1 }, contentType: SMP }],
  ['strategic patch making revision a string', 'PATCH', `${CR}/cr`, { body: { revision: 'x' }, contentType: SMP }],
  ['JSON patch making revision a string', 'PATCH', `${CR}/cr`, { body: [{ op: 'replace', path: '/revision', value: 'x' }], contentType: JSONP }],
  ['apply with secrets a string', 'PATCH', `${SA}/existing?fieldManager=x`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'existing' }, secrets: 'x' }, contentType: APPLY }],
  // Events through either group (events-shared.test.ts, continue-token.test.ts)
  ['events.k8s.io Event without eventTime or type', 'POST', EV1, { body: { metadata: { name: 'e1' }, reason: 'R' } }],
  ['events.k8s.io Event with deprecated fields', 'POST', EV1, { body: { metadata: { name: 'e2' }, ...NEW_EVENT, deprecatedCount: 2, deprecatedSource: { host: 'h' } } }],
  ['events.k8s.io Event with a bad name', 'POST', EV1, { body: { metadata: { name: 'Bad_Name' }, ...NEW_EVENT } }],
  ['events.k8s.io Event with eventTime not a MicroTime', 'POST', EV1, { body: { metadata: { name: 'e3' }, ...NEW_EVENT, eventTime: '2026-11-25T06:00:00Z' } }],
  ['events.k8s.io Event with regarding a string', 'POST', EV1, { body: { metadata: { name: 'e4' }, ...NEW_EVENT, regarding: 'x' } }],
  ['core Event body sent to events.k8s.io', 'POST', EV1, { body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e5' } } }],
  ['core Event with eventTime and no reporting fields', 'POST', EVC, { body: { metadata: { name: 'e6' }, eventTime: '2026-11-25T06:00:00.000000Z' } }],
  ['core Event about an object of another namespace', 'POST', EVC, { body: { metadata: { name: 'e7' }, involvedObject: { namespace: 'kube-system' } } }],
  ['events.k8s.io merge patch changing the note', 'PATCH', `${EV1}/ev`, { body: { note: 'changed' }, contentType: MERGE }],
  ['events.k8s.io merge patch with a series of 1', 'PATCH', `${EV1}/ev`, { body: { series: { count: 1 } }, contentType: MERGE }],
  ['protobuf garbage as an events.k8s.io Event', 'POST', EV1, { body: Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0xff]), contentType: 'application/vnd.kubernetes.protobuf' }],
  ['core field selector on events.k8s.io', 'GET', `${EV1}?fieldSelector=involvedObject.name=x`, {}],
  ['continue token not base64', 'GET', `${EV1}?limit=1&continue=a%2Bbc`, {}],
  ['continue token of a JSON array', 'GET', `${EV1}?limit=1&continue=${token('[1]')}`, {}],
  ['continue token with rv a string', 'GET', `${EV1}?limit=1&continue=${token('{"v":"meta.k8s.io/v1","rv":"1","start":"a"}')}`, {}],
  ['continue token with rv 0', 'GET', `${EV1}?limit=1&continue=${token('{"v":"meta.k8s.io/v1","rv":0,"start":"a"}')}`, {}],
  ['continue token climbing out of the collection', 'GET', `${EVC}?limit=1&continue=${token('{"v":"meta.k8s.io/v1","rv":1,"start":"../../secrets/x"}')}`, {}],
  // URLs
  ['unknown subresource', 'GET', `${SA}/existing/bogus`, {}],
  ['PUT to a collection', 'PUT', SA, { body: { metadata: { name: 'x' } } }],
  ['POST to an object URL', 'POST', `${SA}/existing`, { body: { metadata: { name: 'x' } } }],
  ['bad escape in the path', 'GET', `${SA}/%zz`, {}],
];

describe('no malformed request is answered with a 5xx', () => {
  it.each([...BAD_INPUT_CASES.map(([name, method, path, opts]) => [`bad-input: ${name}`, method, path, opts] as const), ...MALFORMED])(
    '%s',
    async (_name, method, path, opts) => {
      const r = await raw(s, method, path, opts);
      expect([r.status, r.status < 500 ? '' : r.text]).toEqual([r.status, '']);
      if (r.status >= 400) expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', code: r.status });
    },
  );
});
