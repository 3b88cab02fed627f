import { RESOURCES } from '../../src/api/resources.js';
import { serveDiscovery } from '../../src/apiserver/discovery/index.js';
import { buildVersion } from '../../src/lib/version.js';

const KUBECTL_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

interface AggResource {
  resource: string;
  responseKind: { group: string; version: string; kind: string };
  scope: string;
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  subresources?: { subresource: string; responseKind: { group: string; version: string; kind: string }; verbs: string[] }[];
}
interface AggList {
  kind: string;
  apiVersion: string;
  items: { metadata: { name?: string }; versions: { version: string; freshness: string; resources: AggResource[] }[] }[];
}

function get(path: string, accept = KUBECTL_ACCEPT, ifNoneMatch?: string) {
  const res = serveDiscovery({ path, accept, ifNoneMatch });
  if (!res) throw new Error(`no answer for ${path}`);
  return { ...res, json: res.body === '' ? undefined : (JSON.parse(String(res.body)) as unknown) };
}

describe('aggregated discovery', () => {
  it('answers /api and /apis with the exact aggregated v2 content type', () => {
    for (const p of ['/api', '/apis?timeout=32s']) {
      const res = get(p);
      expect(res.status).toBe(200);
      expect(res.headers['Content-Type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
      expect((res.json as AggList).apiVersion).toBe('apidiscovery.k8s.io/v2');
    }
  });

  it('no longer serves v2beta1 (removed in 1.33): the next range the client accepts answers', () => {
    const legacy = get('/apis', 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json');
    expect(legacy.headers['Content-Type']).toBe('application/json');
    expect((legacy.json as { kind: string }).kind).toBe('APIGroupList');
    // kubectl 1.32 lists v2 first, v2beta1 second: it keeps getting v2.
    const v2 = get('/api', 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect([v2.headers['Content-Type'], (v2.json as AggList).apiVersion]).toEqual(['application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', 'apidiscovery.k8s.io/v2']);
  });

  it('lists every resource of the table once, with responseKind on resources and subresources', () => {
    const all = [...(get('/api').json as AggList).items, ...(get('/apis').json as AggList).items];
    const seen = all.flatMap((g) =>
      g.versions.flatMap((v) => v.resources.map((r) => ({ group: g.metadata.name ?? '', version: v.version, r }))),
    );
    expect(seen.map((s) => `${s.group}/${s.r.resource}`).sort()).toEqual(RESOURCES.map((r) => `${r.group}/${r.plural}`).sort());
    for (const { r } of seen) {
      expect(r.responseKind.kind).not.toBe('');
      for (const s of r.subresources ?? []) expect(s.responseKind.kind).not.toBe('');
    }
  });

  it('describes serviceaccounts as upstream does, token subresource in another group', () => {
    const core = (get('/api').json as AggList).items;
    expect(core).toHaveLength(1);
    expect(core[0]?.metadata).toEqual({ creationTimestamp: null });
    const sa = core[0]?.versions[0]?.resources.find((r) => r.resource === 'serviceaccounts');
    expect(sa).toEqual({
      resource: 'serviceaccounts',
      responseKind: { group: '', version: '', kind: 'ServiceAccount' },
      scope: 'Namespaced',
      singularResource: 'serviceaccount',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['sa'],
      subresources: [
        {
          subresource: 'token',
          responseKind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' },
          verbs: ['create'],
        },
      ],
    });
  });

  it('marks cluster-scoped resources and omits empty shortNames', () => {
    const apis = (get('/apis').json as AggList).items;
    const certs = apis.find((g) => g.metadata.name === 'certificates.k8s.io');
    const csr = certs?.versions[0]?.resources[0];
    expect(csr?.scope).toBe('Cluster');
    expect(csr?.subresources?.map((s) => [s.subresource, s.responseKind])).toEqual([
      ['approval', { group: '', version: '', kind: 'CertificateSigningRequest' }],
      ['status', { group: '', version: '', kind: 'CertificateSigningRequest' }],
    ]);
    const tr = apis.find((g) => g.metadata.name === 'authentication.k8s.io')?.versions[0]?.resources;
    expect(tr?.find((r) => r.resource === 'tokenreviews')).not.toHaveProperty('shortNames');
  });

  it('sets an ETag and answers 304 to a matching If-None-Match', () => {
    const first = get('/apis');
    const etag = first.headers.ETag ?? '';
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect(first.headers.Vary).toBe('Accept');
    const again = get('/apis', KUBECTL_ACCEPT, etag);
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    expect(get('/apis', KUBECTL_ACCEPT, '"stale"').status).toBe(200);
  });
});

describe('legacy discovery', () => {
  it('falls back to APIVersions and APIGroupList for plain JSON', () => {
    const api = serveDiscovery({ path: '/api', accept: 'application/json', host: '127.0.0.1:6443' });
    expect(api?.headers['Content-Type']).toBe('application/json');
    expect(JSON.parse(String(api?.body))).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }],
    });
    const apis = get('/apis', 'application/json').json as { kind: string; groups: { name: string; preferredVersion: unknown }[] };
    expect(apis.kind).toBe('APIGroupList');
    const names = new Set(RESOURCES.filter((r) => r.group !== '').map((r) => r.group));
    expect(apis.groups.map((g) => g.name).sort()).toEqual([...names].sort());
    expect(apis.groups.find((g) => g.name === 'certificates.k8s.io')?.preferredVersion).toEqual({
      groupVersion: 'certificates.k8s.io/v1',
      version: 'v1',
    });
  });

  it('serves /api/v1 without apiVersion and subresources as plural/sub entries', () => {
    const doc = get('/api/v1', 'application/json').json as Record<string, unknown> & { resources: Record<string, unknown>[] };
    expect(doc).not.toHaveProperty('apiVersion');
    expect(doc.groupVersion).toBe('v1');
    expect(doc.resources.find((r) => r.name === 'serviceaccounts/token')).toEqual({
      name: 'serviceaccounts/token',
      singularName: '',
      namespaced: true,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
    expect(doc.resources.find((r) => r.name === 'namespaces')).toMatchObject({
      namespaced: false,
      shortNames: ['ns'],
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    });
    expect(doc.resources.find((r) => r.name === 'pods')?.categories).toEqual(['all']);
  });

  it('serves /apis/<g> and /apis/<g>/<v> and nothing for unknown groups', () => {
    const group = get('/apis/certificates.k8s.io', 'application/json').json as Record<string, unknown>;
    expect(group).toMatchObject({ kind: 'APIGroup', apiVersion: 'v1', name: 'certificates.k8s.io' });
    const gv = get('/apis/certificates.k8s.io/v1', 'application/json').json as { apiVersion: string; resources: { name: string }[] };
    expect(gv.apiVersion).toBe('v1');
    expect(gv.resources.map((r) => r.name)).toEqual([
      'certificatesigningrequests',
      'certificatesigningrequests/approval',
      'certificatesigningrequests/status',
      'clustertrustbundles',
      'podcertificaterequests',
      'podcertificaterequests/status',
    ]);
    expect(serveDiscovery({ path: '/apis/example.com/v1', accept: '' })).toBeUndefined();
    expect(serveDiscovery({ path: '/api/v1/namespaces', accept: '' })).toBeUndefined();
  });
});

describe('/version', () => {
  it('reports Kubernetes 1.37', () => {
    const { version } = buildVersion();
    expect(get('/version').json).toMatchObject({ major: '1', minor: '37', gitVersion: `v1.37.0+kube-identity.${version}`, platform: 'linux/amd64' });
  });
});
