/**
 * What a DELETE answers, kind by kind, as kube-apiserver does: the deleted object where upstream's
 * store sets ReturnDeletedObject (pods, services, serviceaccounts, namespaces), a Status elsewhere;
 * and the served OpenAPI's DELETE response schema says the same for every kind.
 */
import { RESOURCES, type ResourceInfo } from '../../src/api/resources.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { createStubPkcs10Request } from '../../src/pki/pod-certificate-key.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ storage: 'memory' });
});
afterAll(async () => {
  await s.close();
});

const key = (r: ResourceInfo): string => `${r.group || 'core'}/${r.plural}`;

/** A valid object of each deletable kind (spec only; metadata.name is added). */
async function bodyFor(r: ResourceInfo): Promise<Record<string, unknown>> {
  const rule = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
  const bodies: Record<string, Record<string, unknown>> = {
    'core/namespaces': {},
    'core/serviceaccounts': {},
    'core/secrets': { data: { a: 'YQ==' } },
    'core/configmaps': { data: { a: 'b' } },
    'core/services': { spec: { ports: [{ port: 80 }] } },
    'core/pods': { spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    'core/nodes': {},
    'core/events': { involvedObject: { kind: 'Pod', name: 'p' }, reason: 'R' },
    'events.k8s.io/events': { type: 'Normal', reason: 'R', action: 'A', eventTime: '2024-05-01T10:00:00.000000Z', reportingController: 'x', reportingInstance: 'y' },
    'coordination.k8s.io/leases': { spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } },
    'apps/controllerrevisions': { revision: 1, data: { x: 1 } },
    'rbac.authorization.k8s.io/roles': { rules: [rule] },
    'rbac.authorization.k8s.io/clusterroles': { rules: [rule] },
    'rbac.authorization.k8s.io/rolebindings': { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'u' }] },
    'rbac.authorization.k8s.io/clusterrolebindings': {
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'r' },
      subjects: [{ kind: 'User', name: 'u' }],
    },
  };
  if (r.kind === 'CertificateSigningRequest') {
    const request = await createCertificateRequestPem({ privateKeyPem: generateKeyPair('ECDSA-P256').privateKeyPem, commonName: 'delete-me' });
    return { spec: { request: Buffer.from(request).toString('base64'), signerName: 'example.com/delete', usages: ['client auth'] } };
  }
  if (r.kind === 'PodCertificateRequest') {
    const stub = await createStubPkcs10Request(generateKeyPair('ECDSA-P256').privateKeyPem);
    const who = { podName: 'p', podUID: 'u1', serviceAccountName: 'sa', serviceAccountUID: 'u2', nodeName: 'n', nodeUID: 'u3' };
    return { spec: { signerName: 'example.com/delete', ...who, stubPKCS10Request: stub.toString('base64') } };
  }
  if (r.kind === 'ClusterTrustBundle') return { spec: { trustBundle: (await createCertificateAuthority({ commonName: 'delete-me' })).certPem } };
  const body = bodies[key(r)];
  if (!body) throw new Error(`no test object for ${key(r)}: add one`);
  return body;
}

/** The kind the served OpenAPI says a DELETE of one `r` answers with (the 200 response's schema). */
async function openApiDeleteKind(r: ResourceInfo): Promise<string> {
  const index = (await raw(s, 'GET', '/openapi/v3')).json as { paths: Record<string, { serverRelativeURL: string }> };
  const gv = r.group === '' ? `api/${r.version}` : `apis/${r.group}/${r.version}`;
  const doc = (await raw(s, 'GET', index.paths[gv]?.serverRelativeURL ?? '')).json as {
    paths: Record<string, { delete?: { responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }> } }>;
    components: { schemas: Record<string, { 'x-kubernetes-group-version-kind'?: { kind: string }[] }> };
  };
  const path = `/${gv}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}/{name}`;
  const ref = doc.paths[path]?.delete?.responses['200']?.content['application/json']?.schema.$ref ?? '';
  const schema = doc.components.schemas[ref.replace('#/components/schemas/', '')];
  return schema?.['x-kubernetes-group-version-kind']?.[0]?.kind ?? `no schema at ${ref}`;
}

const deletable = RESOURCES.filter((r) => r.verbs.includes('delete'));

it('returns the deleted object for exactly the kinds whose upstream store sets ReturnDeletedObject', () => {
  expect(deletable.filter((r) => r.returnsDeletedObject).map(key).sort()).toEqual(['core/namespaces', 'core/pods', 'core/serviceaccounts', 'core/services']);
});

describe.each(deletable.map((r) => [key(r), r] as const))('DELETE %s', (_name, r) => {
  it('answers what the served OpenAPI says it answers', async () => {
    const name = `del-${r.singular}`;
    const base = `/${r.group === '' ? 'api' : `apis/${r.group}`}/${r.version}${r.namespaced ? '/namespaces/default' : ''}/${r.plural}`;
    const created = await raw(s, 'POST', base, { body: { metadata: { name }, ...(await bodyFor(r)) } });
    expect(created.status).toBe(201);
    const d = await raw(s, 'DELETE', `${base}/${name}`);
    expect(d.status).toBe(200);
    const expected = r.returnsDeletedObject ? r.kind : 'Status';
    expect(d.json.kind).toBe(expected);
    expect(await openApiDeleteKind(r)).toBe(expected);
    if (expected === 'Status') {
      expect(d.json).toMatchObject({ status: 'Success', details: { name, kind: r.plural, uid: created.json.metadata.uid } });
    } else {
      expect(d.json.metadata).toMatchObject({ name, uid: created.json.metadata.uid });
    }
  });
});
