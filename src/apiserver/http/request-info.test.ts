import { parseRequestInfo, requestPath, requestQuery, type RequestInfo } from './request-info.js';

const parse = (method: string, target: string): RequestInfo => parseRequestInfo(method, requestPath(target), requestQuery(target).params);

describe('parseRequestInfo', () => {
  it('reads a namespaced object, its collection and its subresource', () => {
    expect(parse('GET', '/api/v1/namespaces/ns/configmaps/cm')).toEqual({
      isResourceRequest: true,
      path: '/api/v1/namespaces/ns/configmaps/cm',
      verb: 'get',
      apiPrefix: 'api',
      apiGroup: '',
      apiVersion: 'v1',
      namespace: 'ns',
      resource: 'configmaps',
      name: 'cm',
      legacyWatch: false,
      collection: false,
    });
    expect(parse('GET', '/apis/apps/v1/namespaces/ns/deployments')).toMatchObject({ verb: 'list', apiGroup: 'apps', apiVersion: 'v1', namespace: 'ns', resource: 'deployments', name: undefined, collection: true });
    expect(parse('PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1/approval')).toMatchObject({
      verb: 'update',
      apiPrefix: 'apis',
      apiGroup: 'certificates.k8s.io',
      namespace: undefined,
      resource: 'certificatesigningrequests',
      name: 'csr-1',
      subresource: 'approval',
    });
  });

  it('derives list, watch and deletecollection for collections', () => {
    expect(parse('GET', '/api/v1/pods?watch=true').verb).toBe('watch');
    expect(parse('GET', '/api/v1/pods?watch=false').verb).toBe('list');
    expect(parse('DELETE', '/api/v1/namespaces/ns/secrets').verb).toBe('deletecollection');
    expect(parse('POST', '/api/v1/namespaces/ns/secrets')).toMatchObject({ verb: 'create', collection: true });
    expect(parse('GET', '/api/v1/watch/namespaces/ns/pods/p')).toMatchObject({ verb: 'watch', legacyWatch: true, namespace: 'ns', resource: 'pods', name: 'p' });
    expect(parse('GET', '/api/v1/watch').isResourceRequest).toBe(false);
  });

  it('names the object a list or watch pins with its field selector, and no other', () => {
    expect(parse('GET', '/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp1')).toMatchObject({ verb: 'list', name: 'p1', collection: true });
    expect(parse('GET', '/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn,metadata.name%3D%3Dp2')).toMatchObject({ verb: 'watch', name: 'p2' });
    expect(parse('DELETE', '/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp1').name).toBeUndefined();
  });

  it('reads namespaces/{name}/status and /finalize as the namespace itself', () => {
    expect(parse('PUT', '/api/v1/namespaces/ns/status')).toMatchObject({ namespace: 'ns', resource: 'namespaces', name: 'ns', subresource: 'status' });
    expect(parse('PUT', '/api/v1/namespaces/ns/finalize')).toMatchObject({ resource: 'namespaces', name: 'ns', subresource: 'finalize' });
    expect(parse('GET', '/api/v1/namespaces/ns')).toMatchObject({ namespace: 'ns', resource: 'namespaces', name: 'ns', subresource: undefined });
  });

  it('decodes each segment after splitting, and the path as a whole', () => {
    const info = parse('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Anode%2Fx');
    expect(info).toMatchObject({ path: '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:node/x', resource: 'clusterroles', name: 'system:node/x' });
    expect(parse('GET', '/api/v1/namespaces/ns/configmaps/%2e%2e')).toMatchObject({ name: '..' });
    expect(() => parse('GET', '/api/v1/namespaces/ns/configmaps/%zz')).toThrow('invalid URL escape "%zz"');
  });

  it('leaves paths that address no resource to non-resource authorization', () => {
    for (const target of ['/healthz', '/api', '/api/v1', '/apis/apps', '/apis/apps/v1', '/api/v1/namespaces/ns/pods/p/log/extra', '/version?x=1']) {
      const info = parse('GET', target);
      expect(info).toMatchObject({ isResourceRequest: false, verb: 'get', path: target.split('?')[0] });
    }
    expect(parse('POST', '//api//v1///pods').isResourceRequest).toBe(true);
  });

  it('gives every request the same fields in the same order, present or not', () => {
    const keys = (info: RequestInfo): string[] => Object.keys(info);
    const shapes = ['/api/v1/pods', '/api/v1/namespaces/ns/pods/p/status', '/apis/apps/v1/namespaces/ns/deployments/d', '/healthz', '/api/v1/watch/pods'].map((t) => keys(parse('GET', t)));
    for (const shape of shapes) expect(shape).toEqual(shapes[0]);
  });
});

describe('requestPath', () => {
  it('is the path as sent, before the query', () => {
    expect(requestPath('/api/v1/pods?limit=1')).toBe('/api/v1/pods');
    expect(requestPath('/api/v1/pods')).toBe('/api/v1/pods');
    expect(requestPath('/a/../b?x')).toBe('/a/../b');
    expect(requestPath('https://host:6443/api/v1/pods?limit=1')).toBe('/api/v1/pods');
  });
});
