/** The informer against the real embedded API server: it converges after cut watches and after a 410. */
import type { KObject } from '../../src/api/meta.js';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { Informer } from '../../src/controller/informer/informer.js';
import { clientListWatch } from '../../src/controller/informer/list-watch.js';
import { realClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { startTestServer } from '../helpers/server.js';
import { ControlledListWatch, createLease, deleteLease, serverLeaseNames, waitFor } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

describe('Informer on the embedded API server', () => {
  let server: Server;
  let client: KubeClient;
  let lw: ControlledListWatch<KObject>;
  let informer: Informer;
  const stop = new AbortController();
  let run: Promise<void>;
  const deletes: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    client = new KubeClient({ kubeConfig: server.kubeConfig, clock: realClock });
    lw = new ControlledListWatch(clientListWatch(client, { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespace: 'default' }));
    informer = new Informer({ name: 'leases', listWatch: lw, clock: realClock, logger: silentLogger(), backoffInitialMs: 20, backoffMaxMs: 200, pageSize: 2 });
    informer.addHandlers({ delete: (o, info) => deletes.push(`${o.metadata?.name}${info.finalStateUnknown ? ' unknown' : ''}`) });
    await createLease(client, 'pre-a');
    await createLease(client, 'pre-b');
    await createLease(client, 'pre-c');
    run = informer.run(stop.signal);
    await informer.waitForSync();
  });

  afterAll(async () => {
    stop.abort();
    await run;
    await server.close();
  });

  const cached = (): string[] => informer.store.list().map((o) => o.metadata?.name ?? '').sort();
  const converged = async (): Promise<boolean> => JSON.stringify(cached()) === JSON.stringify(await serverLeaseNames(client));

  it('syncs the paginated initial list', async () => {
    expect(cached()).toEqual(expect.arrayContaining(['pre-a', 'pre-b', 'pre-c']));
    expect(await converged()).toBe(true);
  });

  it('follows live changes and catches up after its watches are cut', async () => {
    await createLease(client, 'live-1');
    await waitFor('live-1 in cache', () => informer.store.get('default/live-1') !== undefined);
    const watchesBefore = lw.watchRVs.length;
    lw.cutAll();
    await createLease(client, 'while-cut');
    await deleteLease(client, 'pre-a');
    await waitFor('reconnect', () => lw.watchRVs.length > watchesBefore);
    await waitFor('cache equals server', converged);
    // It resumed from a resourceVersion rather than relisting.
    expect(lw.watchRVs[lw.watchRVs.length - 1]).not.toBe('');
    expect(lw.lists).toBe(1);
    expect(deletes).toContain('pre-a');
  });

  it('relists after a 410 and synthesises deletes it missed', async () => {
    lw.paused = true;
    await deleteLease(client, 'pre-b');
    await createLease(client, 'after-gone');
    const listsBefore = lw.lists;
    lw.paused = false;
    lw.injectGone();
    await waitFor('relist', () => lw.lists > listsBefore);
    await waitFor('cache equals server', converged);
    expect(deletes).toContain('pre-b unknown');
    expect(informer.store.get('default/after-gone')).toBeDefined();
  });
});
