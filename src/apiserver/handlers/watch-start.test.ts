import type { KObject } from '../../api/meta.js';
import { buildRegistries } from '../registry/registries.js';
import { buildSelection } from '../registry/generic/selection.js';
import type { ListOptions } from '../registry/generic/types.js';
import { MemoryStore } from '../storage/memory/memory.js';
import { storageKey } from '../storage/store.js';
import { resolveWatchStart } from './watch-start.js';

const options = (o: Partial<ListOptions>): ListOptions => ({
  labelSelector: '',
  fieldSelector: '',
  limit: 0,
  continue: '',
  resourceVersion: '',
  resourceVersionMatch: '',
  allowWatchBookmarks: false,
  ...o,
});

describe('resolveWatchStart', () => {
  const store = new MemoryStore();
  const registry = buildRegistries(store, []).find('', 'v1', 'configmaps')!;
  const prefix = registry.prefix('d');
  const cm = (name: string, app: string): KObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'd', labels: { app } } });
  const web = buildSelection(registry.strategy, 'app=web');
  let first: number;

  beforeAll(async () => {
    first = (await store.create(storageKey('', 'configmaps', 'd', 'a'), cm('a', 'web'))).revision;
    await store.create(storageKey('', 'configmaps', 'd', 'b'), cm('b', 'db'));
  });
  afterAll(() => store.close());

  it('starts with the selected current state when resourceVersion is unset or "0"', async () => {
    for (const resourceVersion of ['', '0']) {
      const start = await resolveWatchStart(registry, prefix, options({ resourceVersion }), web);
      expect(start.revision).toBe(store.currentRevision());
      expect(start.sendInitialEvents).toBe(true);
      expect(start.initial.map((o) => o.metadata?.name)).toEqual(['a']);
    }
  });

  it('starts from now without initial events when sendInitialEvents is false', async () => {
    const start = await resolveWatchStart(registry, prefix, options({ sendInitialEvents: false }), web);
    expect(start).toEqual({ revision: store.currentRevision(), initial: [], sendInitialEvents: false });
  });

  it('resumes after a given revision', async () => {
    const start = await resolveWatchStart(registry, prefix, options({ resourceVersion: String(first) }), web);
    expect(start).toEqual({ revision: first, initial: [], sendInitialEvents: false });
  });

  it('sends the current state first for a given revision when sendInitialEvents is true', async () => {
    const start = await resolveWatchStart(registry, prefix, options({ resourceVersion: String(first), sendInitialEvents: true }), buildSelection(registry.strategy));
    expect(start.revision).toBe(store.currentRevision());
    expect(start.initial.map((o) => o.metadata?.name)).toEqual(['a', 'b']);
  });
});
