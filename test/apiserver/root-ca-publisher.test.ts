/**
 * ConfigMap kube-root-ca.crt in every namespace, as kube-controller-manager's root-ca-cert-publisher
 * keeps it: made with each namespace, put back when deleted, its data restored when changed, and its
 * `ca.crt` verifies the server a client reaches (what a pod's projected token volume relies on).
 */
import tls from 'node:tls';
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, type KubectlResult } from '../kubectl/kubectl.js';
import { DESCRIPTION_ANNOTATION, ROOT_CA_DESCRIPTION } from '../../src/apiserver/controllers/root-ca-publisher.js';

let s: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;
beforeAll(async () => {
  s = await startTestServer({ storage: 'sqlite' });
  kubectl = kubectlFor(s);
});
afterAll(async () => {
  await s.close();
});

const cmPath = (ns: string, name = 'kube-root-ca.crt'): string => `/api/v1/namespaces/${ns}/configmaps/${name}`;

interface ConfigMapEvent {
  type: string;
  object: { metadata: { uid: string; labels?: Record<string, string>; annotations?: Record<string, string> }; data?: Record<string, string> };
}

/** Watches the namespace's kube-root-ca.crt from `rv` and returns the first `n` events. */
async function nextEvents(ns: string, rv: string, n: number): Promise<ConfigMapEvent[]> {
  const w = await openWatch(s, `/api/v1/namespaces/${ns}/configmaps?watch=1&fieldSelector=metadata.name%3Dkube-root-ca.crt&resourceVersion=${rv}`);
  try {
    return (await w.waitFor(n)).slice(0, n);
  } finally {
    w.close();
  }
}

describe('kube-root-ca.crt', () => {
  it('is in every namespace the server starts with, with the CA and its description', async () => {
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      const cm = (await raw(s, 'GET', cmPath(ns))).json;
      expect([ns, cm.data, cm.metadata.annotations]).toEqual([ns, { 'ca.crt': s.caPem }, { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION }]);
      expect(cm.metadata.managedFields.map((f: { manager: string }) => f.manager)).toEqual(['kube-controller-manager']);
    }
  });

  it('verifies the server it was read from', async () => {
    const ca = (await raw(s, 'GET', cmPath('default'))).json.data['ca.crt'] as string;
    const url = new URL(s.url);
    const authorized = await new Promise<boolean>((resolve, reject) => {
      const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca, rejectUnauthorized: true }, () => {
        resolve(socket.authorized);
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(authorized).toBe(true);
  });

  it('comes with a new namespace and comes back after kubectl delete', async () => {
    const created = await kubectl('create', 'namespace', 'team');
    expect(created.code).toBe(0);
    const rv = (await raw(s, 'GET', '/api/v1/namespaces/team')).json.metadata.resourceVersion as string;
    const [added] = await nextEvents('team', rv, 1);
    expect([added?.type, added?.object.data]).toEqual(['ADDED', { 'ca.crt': s.caPem }]);

    const listed = await kubectl('get', 'configmaps', '-n', 'team', '-o', 'name');
    expect(listed.stdout).toBe('configmap/kube-root-ca.crt\n');
    const before = (await raw(s, 'GET', cmPath('team'))).json;
    const del = await kubectl('delete', 'configmap', 'kube-root-ca.crt', '-n', 'team');
    expect([del.code, del.stdout.trim()]).toEqual([0, 'configmap "kube-root-ca.crt" deleted']);
    const [deleted, again] = await nextEvents('team', before.metadata.resourceVersion, 2);
    expect([deleted?.type, again?.type, again?.object.data]).toEqual(['DELETED', 'ADDED', { 'ca.crt': s.caPem }]);
    expect(again?.object.metadata.uid).not.toBe(before.metadata.uid);
  });

  it('gets its data back after an edit, keeping what else the user set', async () => {
    const patch = { metadata: { labels: { team: 'a' }, annotations: { note: 'mine', [DESCRIPTION_ANNOTATION]: '' } }, data: { 'ca.crt': 'not a CA', extra: 'x' } };
    const patched = await raw(s, 'PATCH', cmPath('default'), { body: JSON.stringify(patch), contentType: 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
    const [restore] = await nextEvents('default', patched.json.metadata.resourceVersion as string, 1);
    expect(restore?.type).toBe('MODIFIED');
    expect(restore?.object.data).toEqual({ 'ca.crt': s.caPem });
    expect(restore?.object.metadata.labels).toEqual({ team: 'a' });
    expect(restore?.object.metadata.annotations).toEqual({ note: 'mine', [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION });
  });

  it('is not made again in a namespace being deleted', async () => {
    expect((await kubectl('create', 'namespace', 'leaving')).code).toBe(0);
    const rv = (await raw(s, 'GET', '/api/v1/namespaces/leaving')).json.metadata.resourceVersion as string;
    await nextEvents('leaving', rv, 1);
    const del = await kubectl('delete', 'namespace', 'leaving', '--timeout=10s');
    expect(del.code).toBe(0);
    expect((await raw(s, 'GET', '/api/v1/namespaces/leaving')).status).toBe(404);
    expect((await raw(s, 'GET', cmPath('leaving'))).status).toBe(404);
  });
});
