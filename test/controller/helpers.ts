/** Shared bits of the controller integration tests. */
import { CoordinationV1Api } from '@kubernetes/client-node';
import type { KObject } from '../../src/api/meta.js';
import type { ListWatch, WatchHandle } from '../../src/controller/informer/list-watch.js';
import type { KubeClient } from '../../src/controller/client/kube-client.js';

export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Wraps a real ListWatch so a test can cut every open watch (as a dropped connection would), hold
 * events back, inject events (a 410 ERROR), and gate the first LIST.
 */
export class ControlledListWatch<T extends KObject> implements ListWatch<T> {
  private open: { handle: WatchHandle; inject: (ev: { type: 'ERROR'; object: KObject }) => void }[] = [];
  watchRVs: string[] = [];
  /** Full lists started (pages of one list count once). */
  lists = 0;
  paused = false;
  gate: Promise<void> = Promise.resolve();

  constructor(private readonly inner: ListWatch<T>) {}

  async list(...args: Parameters<ListWatch<T>['list']>) {
    await this.gate;
    if (!args[0].continue) this.lists++; // count full lists, not pages
    return this.inner.list(...args);
  }

  async watch(...[opts, cb]: Parameters<ListWatch<T>['watch']>) {
    this.watchRVs.push(opts.resourceVersion);
    const handle = await this.inner.watch(opts, {
      onEvent: (ev) => {
        if (!this.paused) cb.onEvent(ev);
      },
      onDone: (err) => cb.onDone(err),
    });
    this.open.push({ handle, inject: (ev) => cb.onEvent(ev as never) });
    return handle;
  }

  cutAll(): void {
    for (const w of this.open.splice(0)) w.handle.stop();
  }

  injectGone(): void {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version' };
    for (const w of this.open.splice(0)) w.inject({ type: 'ERROR', object: status as KObject });
  }
}

export function leaseBody(name: string, namespace = 'default') {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace },
    spec: { holderIdentity: `holder-${name}`, leaseDurationSeconds: 30 },
  };
}

export async function createLease(client: KubeClient, name: string, namespace = 'default'): Promise<void> {
  await client.api(CoordinationV1Api).createNamespacedLease({ namespace, body: leaseBody(name, namespace) });
}

export async function deleteLease(client: KubeClient, name: string, namespace = 'default'): Promise<void> {
  await client.api(CoordinationV1Api).deleteNamespacedLease({ name, namespace });
}

export async function serverLeaseNames(client: KubeClient, namespace = 'default'): Promise<string[]> {
  const list = await client.api(CoordinationV1Api).listNamespacedLease({ namespace });
  return list.items.map((l) => l.metadata?.name ?? '').sort();
}
