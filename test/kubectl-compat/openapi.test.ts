import protobuf from 'protobufjs';
import { RESOURCES } from '../../src/api/resources.js';
import { serveDiscovery } from '../../src/apiserver/discovery/index.js';
import { VERSION_INFO } from '../../src/apiserver/discovery/version.js';
import { schemaFor } from '../../src/apiserver/openapi/index.js';
import { decodeWalk } from '../../src/apiserver/validation/object-decode.js';

interface Doc {
  paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; 'x-kubernetes-group-version-kind'?: unknown }>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

function fetchJson(path: string): unknown {
  const res = serveDiscovery({ path, accept: 'application/json' });
  if (res?.status !== 200) throw new Error(`GET ${path}: ${res?.status}`);
  return JSON.parse(String(res.body));
}

const index = fetchJson('/openapi/v3') as { paths: Record<string, { serverRelativeURL: string }> };
const docFor = (group: string, version: string): Doc => {
  const key = group === '' ? `api/${version}` : `apis/${group}/${version}`;
  const entry = index.paths[key];
  if (!entry) throw new Error(`${key} missing from /openapi/v3`);
  return fetchJson(entry.serverRelativeURL) as Doc;
};

describe('OpenAPI v3', () => {
  it('indexes every served group-version and discovery endpoint, in path order, with a hash that changes with the document', () => {
    const gvs = new Set(RESOURCES.map((r) => (r.group === '' ? `api/${r.version}` : `apis/${r.group}/${r.version}`)));
    const groups = new Set(RESOURCES.filter((r) => r.group !== '').map((r) => `apis/${r.group}`));
    const want = [...gvs, ...groups, '.well-known/openid-configuration', 'api', 'apis', 'openid/v1/jwks', 'version'].sort();
    expect(Object.keys(index.paths)).toEqual(want);
    const hashes = Object.values(index.paths).map((p) => /\?hash=([0-9A-F]{128})$/.exec(p.serverRelativeURL)?.[1]);
    expect(hashes.every((h) => h !== undefined)).toBe(true);
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  it.each([
    ['api', '/api/', 'getCoreAPIVersions', 'core', 'io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions', '/api'],
    ['apis', '/apis/', 'getAPIVersions', 'apis', 'io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList', '/apis'],
    ['apis/rbac.authorization.k8s.io', '/apis/rbac.authorization.k8s.io/', 'getRbacAuthorizationAPIGroup', 'rbacAuthorization', 'io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup', '/apis/rbac.authorization.k8s.io'],
    ['apis/apps', '/apis/apps/', 'getAppsAPIGroup', 'apps', 'io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup', '/apis/apps'],
    ['version', '/version/', 'getCodeVersion', 'version', 'io.k8s.apimachinery.pkg.version.Info', '/version'],
  ])('%s: a document with the GET of %s and the schema of what it answers', (key, path, operationId, tag, schema, served) => {
    const entry = index.paths[key];
    expect(entry?.serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/${key}\\?hash=[0-9A-F]{128}$`));
    const doc = fetchJson(entry?.serverRelativeURL ?? '') as Doc & { paths: Record<string, { get: Record<string, unknown> }> };
    expect(Object.keys(doc.paths)).toEqual([path]);
    expect(doc.paths[path]?.get).toMatchObject({ operationId, tags: [tag], responses: { '200': { content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } } } });
    // Every field the endpoint answers is in its schema, and every schema the document references is in it.
    const properties = Object.keys((doc.components.schemas[schema]?.properties ?? {}) as object);
    expect(properties).toEqual(expect.arrayContaining(Object.keys(fetchJson(served) as object)));
    for (const m of JSON.stringify(doc).matchAll(/#\/components\/schemas\/([^"]+)/g)) expect(doc.components.schemas[m[1] ?? '']).toBeDefined();
  });

  it.each([
    ['.well-known/openid-configuration', '/.well-known/openid-configuration/', 'getServiceAccountIssuerOpenIDConfiguration', 'WellKnown', 'application/json'],
    ['openid/v1/jwks', '/openid/v1/jwks/', 'getServiceAccountIssuerOpenIDKeyset', 'openid', 'application/jwk-set+json'],
  ])("%s: the issuer's document, a string to OpenAPI", (key, path, operationId, tag, contentType) => {
    const doc = fetchJson(index.paths[key]?.serverRelativeURL ?? '') as Doc & { paths: Record<string, { get: Record<string, unknown> }> };
    expect(doc.paths[path]?.get).toMatchObject({ operationId, tags: [tag], responses: { '200': { content: { [contentType]: { schema: { type: 'string' } } } } } });
    expect(doc.components.schemas).toEqual({});
  });

  it('has no document for a group it does not serve', () => {
    expect(serveDiscovery({ path: '/openapi/v3/apis/batch', accept: 'application/json' })?.status).toBe(404);
  });

  it.each(RESOURCES.map((r) => [`${r.group || 'core'}/${r.kind}`, r] as const))(
    '%s: a schema tagged with its GVK, and a PATCH with fieldValidation when patchable',
    (_name, r) => {
      const doc = docFor(r.group, r.version);
      const gvk = { group: r.group, version: r.version, kind: r.kind };
      const schemas = Object.values(doc.components.schemas);
      const schema = schemas.find((s) => JSON.stringify(s['x-kubernetes-group-version-kind']) === JSON.stringify([gvk]));
      // What `kubectl explain` prints under DESCRIPTION (`<empty>` without one).
      expect(schema?.description).toMatch(new RegExp(`^${r.kind} `));
      const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
      const patch = Object.values(doc.paths)
        .map((p) => p.patch)
        .find((op) => op && JSON.stringify(op['x-kubernetes-group-version-kind']) === JSON.stringify(gvk));
      if (r.verbs.includes('patch')) {
        expect(patch?.parameters).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query' }));
      } else {
        expect(patch).toBeUndefined();
        expect(ops.length).toBeGreaterThan(0);
      }
      // Every $ref resolves inside the same document.
      const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1] ?? '');
      expect(refs.filter((n) => !(n in doc.components.schemas))).toEqual([]);
    },
  );

  it('describes CSR bytes, list-map conditions and required spec fields', () => {
    /** The inlined schema at a property path. */
    const at = (...keys: string[]): Record<string, unknown> =>
      keys.reduce<Record<string, unknown>>(
        (node, k) => ((node.properties ?? {}) as Record<string, Record<string, unknown>>)[k] ?? {},
        schemaFor('certificates.k8s.io', 'v1', 'CertificateSigningRequest') ?? {},
      );
    expect(at('spec', 'request')).toMatchObject({ type: 'string', format: 'byte' });
    expect(at('spec').required).toEqual(['request', 'signerName']);
    expect(at('status', 'certificate').format).toBe('byte');
    expect(at('status', 'conditions')).toMatchObject({
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    });
    expect(at('metadata', 'ownerReferences')['x-kubernetes-patch-merge-key']).toBe('uid');
  });

  it('serves /openapi/v2 as a protobuf document with no paths, and 404 for unknown group-versions', () => {
    const v2 = serveDiscovery({ path: '/openapi/v2', accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
    expect(v2?.status).toBe(200);
    expect(v2?.headers['Content-Type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    // openapi_v2.Document: swagger = 1 (string), info = 2 (Info: title = 1, version = 2).
    const r = protobuf.Reader.create(v2?.body as Buffer);
    const fields: Record<number, string | Uint8Array> = {};
    while (r.pos < r.len) {
      const tag = r.uint32();
      fields[tag >>> 3] = tag >>> 3 === 1 ? r.string() : r.bytes();
    }
    expect(fields[1]).toBe('2.0');
    const info = protobuf.Reader.create(fields[2] as Uint8Array);
    expect([info.uint32(), info.string(), info.uint32(), info.string()]).toEqual([0x0a, 'Kubernetes', 0x12, VERSION_INFO.gitVersion]);
    expect(serveDiscovery({ path: '/openapi/v3/apis/example.com/v1', accept: 'application/json' })?.status).toBe(404);
  });
});

/** The fields a body's decode finds its kind's schema does not declare. */
const unknownFields = (obj: Record<string, unknown>, group: string, version: string, kind: string): string[] =>
  decodeWalk(obj, { group, version, kind }, { typed: false, unknownFields: true }).unknownFields;

describe('unknown fields', () => {
  it('accepts the golden-shaped objects it describes', () => {
    const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'a', labels: { x: 'y' } }, secrets: [{ name: 's' }] };
    expect(unknownFields(sa, '', 'v1', 'ServiceAccount')).toEqual([]);
  });

  it('reports unknown fields with their paths, inside lists and references', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', bogus: 1 },
      spec: { containers: [{ name: 'c', image: 'i', imagePolicy: 'x' }], foo: true, affinity: { anything: 1 } },
    };
    expect(unknownFields(pod, '', 'v1', 'Pod').sort()).toEqual(['metadata.bogus', 'spec.containers[0].imagePolicy', 'spec.foo']);
  });

  it('keeps free-form data (ControllerRevision.data) and map values unchecked', () => {
    const cr = { apiVersion: 'apps/v1', kind: 'ControllerRevision', revision: 1, data: { any: { thing: 1 } } };
    expect(unknownFields(cr, 'apps', 'v1', 'ControllerRevision')).toEqual([]);
    const sec = { apiVersion: 'v1', kind: 'Secret', data: { 'tls.crt': 'AA==' }, extra: 1 };
    expect(unknownFields(sec, '', 'v1', 'Secret')).toEqual(['extra']);
  });

  it('returns nothing for kinds without a schema', () => {
    expect(unknownFields({ a: 1 }, 'example.com', 'v1', 'Widget')).toEqual([]);
  });
});
