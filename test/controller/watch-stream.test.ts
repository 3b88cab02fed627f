/**
 * clientListWatch's WATCH as a streaming GET on KubeClient's transport, against a real HTTPS server
 * that writes events in awkward chunks, ends cleanly, breaks mid-stream, or answers with a Status.
 */
import type { ServerResponse } from 'node:http';
import type { KObject, WatchEvent } from '../../src/api/meta.js';
import { HttpStatusError, KubeClient } from '../../src/controller/client/kube-client.js';
import { isGone } from '../../src/lib/api-errors.js';
import { clientListWatch, type WatchHandle } from '../../src/controller/informer/list-watch.js';
import { realClock } from '../../src/lib/clock.js';
import { FakeApiServer, json } from './fake-apiserver.js';
import { waitFor } from './helpers.js';

const lease = (name: string, rv: string): string =>
  JSON.stringify({ type: 'ADDED', object: { kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', metadata: { name, namespace: 'ns', resourceVersion: rv, annotations: { note: 'é—漢字' } } } }) + '\n';

describe('clientListWatch watch stream', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  let events: WatchEvent<KObject>[];
  let done: unknown[];
  let open: ServerResponse | undefined;

  const watch = (): Promise<WatchHandle> =>
    clientListWatch(client, { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespace: 'ns', labelSelector: 'app=x' }).watch(
      { resourceVersion: '41', allowWatchBookmarks: true, timeoutSeconds: 321 },
      { onEvent: (ev) => events.push(ev), onDone: (err) => done.push(err ?? 'clean') },
    );
  /** The streaming reply the server is holding open, once the request arrived. */
  const stream = async (): Promise<ServerResponse> => {
    await waitFor('watch request', () => open !== undefined);
    return open as ServerResponse;
  };
  const names = (): string[] => events.map((e) => e.object.metadata?.name ?? '');

  beforeEach(async () => {
    server = await FakeApiServer.start();
    client = new KubeClient({ kubeConfig: server.tokenKubeConfig('t'), clock: realClock });
    events = [];
    done = [];
    open = undefined;
    server.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      open = res;
    };
  });
  afterEach(async () => {
    client.close();
    await server.close();
  });

  it('asks for a watch with bookmarks and a timeout, joins events split across chunks, and ends cleanly', async () => {
    await watch();
    const res = await stream();
    const url = new URL(server.seen[0]?.url ?? '', server.url);
    expect(url.pathname).toBe('/apis/coordination.k8s.io/v1/namespaces/ns/leases');
    expect(Object.fromEntries(url.searchParams)).toEqual({ labelSelector: 'app=x', watch: 'true', resourceVersion: '41', allowWatchBookmarks: 'true', timeoutSeconds: '321' });
    const bytes = Buffer.from(lease('a', '42') + lease('b', '43') + lease('c', '44'));
    // Cut inside a multi-byte character and inside the second event; deliver 'a' and half of 'b' together.
    const cuts = [bytes.indexOf('é') + 1, bytes.indexOf('"b"') + 2, bytes.length];
    let from = 0;
    for (const to of cuts) {
      res.write(bytes.subarray(from, to));
      from = to;
      await new Promise((r) => setTimeout(r, 20));
    }
    await waitFor('three events', () => events.length === 3);
    res.end();
    await waitFor('done', () => done.length > 0);
    expect(names()).toEqual(['a', 'b', 'c']);
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { resourceVersion: '42', annotations: { note: 'é—漢字' } } } });
    expect(done).toEqual(['clean']);
  });

  it('reports a connection broken mid-stream as an error, once', async () => {
    await watch();
    const res = await stream();
    res.write(lease('a', '42') + lease('b', '43').slice(0, 20));
    await waitFor('first event', () => events.length === 1);
    res.socket?.destroy();
    await waitFor('done', () => done.length > 0);
    await new Promise((r) => setTimeout(r, 50));
    expect(names()).toEqual(['a']);
    expect(done).toHaveLength(1);
    expect(done[0]).toBeInstanceOf(Error);
  });

  it('ends with an error on a line that is not JSON rather than dropping an event', async () => {
    await watch();
    const res = await stream();
    res.write(lease('a', '42') + '{"type":"ADDED","obj\n' + lease('c', '44'));
    await waitFor('done', () => done.length > 0);
    expect(names()).toEqual(['a']);
    expect(done[0]).toBeInstanceOf(SyntaxError);
  });

  it('stop() closes the request and reports a clean end once', async () => {
    const handle = await watch();
    const res = await stream();
    const closed = new Promise((r) => res.on('close', r));
    res.write(lease('a', '42'));
    await waitFor('first event', () => events.length === 1);
    handle.stop();
    handle.stop();
    await closed;
    res.write(lease('b', '43'));
    await new Promise((r) => setTimeout(r, 50));
    expect(names()).toEqual(['a']);
    expect(done).toEqual(['clean']);
  });

  it('turns a non-200 reply into HttpStatusError with the Status (410 reads as Gone)', async () => {
    server.handler = (_req, res) => json(res, 410, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version: 41 (50)' });
    await watch();
    expect(done).toHaveLength(1);
    expect(done[0]).toBeInstanceOf(HttpStatusError);
    expect(done[0]).toMatchObject({ code: 410, body: { reason: 'Expired' } });
    expect(isGone(done[0])).toBe(true);
  });

  it('reports a refused connection through onDone without rejecting', async () => {
    await server.close();
    const handle = await watch();
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ code: 'ECONNREFUSED' });
    handle.stop();
    server = await FakeApiServer.start(); // for afterEach
  });
});
