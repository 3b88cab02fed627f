/** IndexedStore's group commit against a backend whose commits the test settles (stores' shared behaviour: store-conformance.test.ts). */
import type { KObject } from '../../api/meta.js';
import { IndexedStore } from './indexed-store.js';
import { StoreError } from './store.js';

/** A backend that holds every commit handed to it until the test settles it. */
class HeldStore extends IndexedStore {
  readonly commits: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  constructor() {
    super(100);
  }
  protected override persist(): Promise<void> {
    return new Promise((resolve, reject) => this.commits.push({ resolve, reject }));
  }
}

const obj = (name: string, v: string): KObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v } });
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('IndexedStore group commit', () => {
  it('fails the writes behind a commit of unknown outcome that were never handed over as not written, not as unknown', async () => {
    const store = new HeldStore();
    const sent = store.create('/r/a', obj('a', '1'));
    await turn();
    const sentBehind = store.update('/r/a', obj('a', '2'), 1);
    await turn();
    // Checked against the two writes above, and still queued when the first one's outcome is known.
    const unsent = store.update('/r/a', obj('a', '3'), 2);
    expect(store.commits).toHaveLength(2);
    store.commits[0]!.reject(new StoreError('Timeout', '', 'the backend died: the write may or may not have been committed'));
    // Handed over behind it: its outcome is as unknown, whatever the backend answers.
    store.commits[1]!.resolve();
    await expect(sent).rejects.toMatchObject({ code: 'Timeout' });
    await expect(sentBehind).rejects.toMatchObject({ code: 'Timeout' });
    await expect(unsent).rejects.toMatchObject({ code: 'Unavailable', message: expect.stringMatching(/not written/) });
    await turn();
    expect(store.commits).toHaveLength(2);
    expect(store.currentRevision()).toBe(0);
    await store.close();
  });
});
