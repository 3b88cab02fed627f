/**
 * The `default` ServiceAccount as kube-controller-manager's serviceaccounts controller keeps it:
 * every active namespace has one, made again whenever it is deleted (`kubectl delete sa --all`
 * included), never in a namespace that is Terminating.
 */
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, type KubectlResult } from '../kubectl/kubectl.js';

let s: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;
beforeAll(async () => {
  s = await startTestServer();
  kubectl = kubectlFor(s);
});
afterAll(async () => {
  await s.close();
});

const sa = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/serviceaccounts${name ? `/${name}` : ''}`;

describe('the default ServiceAccount comes back', () => {
  it('after kubectl delete sa default, as a new object', async () => {
    expect((await kubectl('create', 'namespace', 'team')).code).toBe(0);
    const before = (await raw(s, 'GET', sa('team', 'default'))).json;
    const w = await openWatch(s, `${sa('team')}?watch=1&resourceVersion=${before.metadata.resourceVersion}`);
    const del = await kubectl('delete', 'serviceaccount', 'default', '-n', 'team');
    expect([del.code, del.stdout.trim()]).toEqual([0, 'serviceaccount "default" deleted']);
    const [deleted, added] = await w.waitFor(2);
    w.close();
    expect([deleted.type, deleted.object.metadata.uid]).toEqual(['DELETED', before.metadata.uid]);
    expect([added.type, added.object.metadata.name]).toEqual(['ADDED', 'default']);
    const after = (await raw(s, 'GET', sa('team', 'default'))).json;
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
  });

  it('after kubectl delete sa --all, alone', async () => {
    expect((await kubectl('create', 'namespace', 'team2')).code).toBe(0);
    for (const name of ['a', 'b']) expect((await kubectl('create', 'serviceaccount', name, '-n', 'team2')).code).toBe(0);
    const del = await kubectl('delete', 'sa', '--all', '-n', 'team2');
    expect(del.code).toBe(0);
    const left = await kubectl('get', 'sa', '-n', 'team2', '-o', 'name');
    expect(left.stdout).toBe('serviceaccount/default\n');
  });

  it('only for default, and not in a namespace being deleted', async () => {
    expect((await kubectl('create', 'namespace', 'team3')).code).toBe(0);
    expect((await kubectl('create', 'serviceaccount', 'bot', '-n', 'team3')).code).toBe(0);
    expect((await raw(s, 'DELETE', sa('team3', 'bot'))).status).toBe(200);
    expect((await raw(s, 'GET', sa('team3', 'bot'))).status).toBe(404);

    const wait = await kubectl('delete', 'namespace', 'team3', '--timeout=10s');
    expect(wait.code).toBe(0);
    expect((await raw(s, 'GET', '/api/v1/namespaces/team3')).status).toBe(404);
    expect((await raw(s, 'GET', sa('team3', 'default'))).status).toBe(404);
  });
});
