import type { KObject } from '../../../api/meta.js';
import type { KeyValue } from './etcd-proto.js';
import { PreviousStates } from './previous-states.js';
import { RecentObjects, type Revisioned } from './recent-objects.js';
import { StoreError } from '../store.js';

const kv = (revision: number): KeyValue => ({ key: Buffer.from('/p/a'), value: Buffer.from(`{"v":${revision}}`), create_revision: 1, mod_revision: revision, version: 2 });

function setup(failures: StoreError[] = []) {
  const recent = new RecentObjects();
  const reads: number[] = [];
  let closed = false;
  const states = new PreviousStates(recent, {
    read: async (_key, _etcdKey, revision) => {
      reads.push(revision);
      const failure = failures.shift();
      if (failure) throw failure;
      return kv(revision - 2);
    },
    open: (_key, _etcdKey, value) => JSON.parse(value.toString()) as KObject,
    closed: () => closed,
  });
  return { recent, reads, states, close: () => (closed = true) };
}

describe('PreviousStates', () => {
  it('takes the state the watch delivered from what the store decoded, without a read', () => {
    const { recent, reads, states } = setup();
    const object = { metadata: { name: 'a' } };
    recent.saw('/p/a', { object, revision: 7 });
    const known = states.before('a', '/p/a', 9, { prevRevision: 7 }) as Revisioned;
    expect([known.object, known.revision]).toEqual([object, 7]);
    expect(known.object).toBe(object);
    expect(reads).toEqual([]);
  });

  it('takes a state a read showed current at or after the watch start, without a read', () => {
    const { recent, reads, states } = setup();
    const object = { metadata: { name: 'a' } };
    recent.saw('/p/a', { object, revision: 3 }, 8);
    const known = states.before('a', '/p/a', 9, { since: 8 }) as Revisioned;
    expect([known.object, known.revision]).toEqual([object, 3]);
    expect(known.object).toBe(object);
    expect(reads).toEqual([]);
  });

  it('reads the key at the revision before the event, once however many watches ask', async () => {
    const { reads, states } = setup();
    const [first, second] = [states.before('a', '/p/a', 10, {}), states.before('a', '/p/a', 10, { prevRevision: 4 })];
    expect(await first).toEqual({ object: { v: 7 }, revision: 7 });
    expect(await second).toEqual({ object: { v: 7 }, revision: 7 });
    expect(reads).toEqual([9]);
  });

  it('reads again while etcd is unreachable, and gives up on anything else', async () => {
    const unavailable = new StoreError('Unavailable', 'a', 'etcd is unavailable');
    const retried = setup([unavailable, new StoreError('Timeout', 'a', 'etcd did not answer in time')]);
    expect(await retried.states.before('a', '/p/a', 10, {})).toEqual({ object: { v: 7 }, revision: 7 });
    expect(retried.reads).toEqual([9, 9, 9]);

    const compacted = setup([new StoreError('Compacted', 'a', 'compacted', 12)]);
    await expect(compacted.states.before('a', '/p/a', 10, {})).rejects.toMatchObject({ code: 'Compacted' });

    // Not once the store is closed.
    const closing = setup([unavailable, unavailable]);
    const read = closing.states.before('a', '/p/a', 10, {});
    closing.close();
    await expect(read).rejects.toBe(unavailable);
    expect(closing.reads).toEqual([9]);
  });
});
