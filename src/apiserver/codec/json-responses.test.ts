import { jest } from '@jest/globals';
import type { KObject, WatchEventType } from '../../api/meta.js';
import { parseFrozen } from '../storage/frozen.js';
import { partialObject } from '../handlers/table.js';
import { encodeLine, eventLine, listJson, listValue, partialListJson, partialObjectJson, type EventRepresentation } from './json-responses.js';

/** A stored object as the stores hand it out: parsed from its JSON text, deep-frozen, the text remembered. */
const stored = (name: string, rv: string, extra: Record<string, unknown> = {}): KObject =>
  parseFrozen(
    JSON.stringify({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name, namespace: 'ns', resourceVersion: rv, labels: { 'a"b': 'ü\u2028' }, managedFields: [{ manager: 'm', operation: 'Update' }] },
      data: { k: `v-${rv}` },
      ...extra,
    }),
  );

/** Counts JSON.stringify calls while `fn` runs. */
function stringifyCalls(fn: () => void): unknown[][] {
  const spy = jest.spyOn(JSON, 'stringify');
  try {
    fn();
    return spy.mock.calls.map((c) => [...c]);
  } finally {
    spy.mockRestore();
  }
}

const representations: [string, EventRepresentation][] = [
  ['the object', { kind: 'object' }],
  ['PartialObjectMetadata v1', { kind: 'partial', metaVersion: 'v1' }],
  ['PartialObjectMetadata v1beta1', { kind: 'partial', metaVersion: 'v1beta1' }],
];
const wire = (obj: KObject, r: EventRepresentation): object => (r.kind === 'object' ? obj : partialObject(obj, r.metaVersion));

describe('JSON responses from stored objects', () => {
  const items = [stored('a', '5'), stored('b', '6'), { kind: 'ConfigMap', metadata: { name: 'draft', labels: undefined } }];

  it('a list is exactly JSON.stringify of its listValue, with and without paging metadata', () => {
    for (const metadata of [{ resourceVersion: '9' }, { resourceVersion: '9', continue: 'abc', remainingItemCount: 3 }, { resourceVersion: '9', continue: undefined }]) {
      const list = { apiVersion: 'v1', kind: 'ConfigMapList', metadata, items };
      expect(listJson(list)).toBe(JSON.stringify(listValue(list)));
      expect(listJson({ ...list, items: [] })).toBe(JSON.stringify({ ...list, items: [] }));
    }
  });

  it("a list's items carry no kind or apiVersion, wherever their text has them", () => {
    const typed = [
      stored('first', '1'),
      parseFrozen(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'client-order' } })),
      parseFrozen(JSON.stringify({ metadata: { name: 'last', ownerReferences: [{ kind: 'Pod', apiVersion: 'v1' }] }, apiVersion: 'v1', kind: 'ConfigMap' })),
      parseFrozen(JSON.stringify({ metadata: { name: 'between' }, kind: 'ConfigMap', data: {}, apiVersion: 'v1' })),
      parseFrozen(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap' })),
      parseFrozen(JSON.stringify({ metadata: { name: 'added' }, data: { kind: 'x', apiVersion: 'y' }, apiVersion: 'v1', kind: 'ConfigMap' })),
      parseFrozen(JSON.stringify({ metadata: { name: 'nested', x: { apiVersion: 'v1', kind: 'ConfigMap' } } })),
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'draft' } },
    ];
    const list = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '9' }, items: typed };
    const decoded = JSON.parse(listJson(list)) as { items: Record<string, unknown>[] };
    expect(decoded.items.map((i) => Object.keys(i))).toEqual([['metadata', 'data'], ['metadata'], ['metadata'], ['metadata', 'data'], [], ['metadata', 'data'], ['metadata'], ['metadata']]);
    expect(decoded.items[2]).toEqual({ metadata: { name: 'last', ownerReferences: [{ kind: 'Pod', apiVersion: 'v1' }] } });
    expect(listJson(list)).toBe(JSON.stringify(listValue(list)));
    expect(listJson(list)).toBe(listJson(list));
  });

  it('a list of stored objects encodes none of them again', () => {
    const list = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '9' }, items: items.slice(0, 2) };
    const calls = stringifyCalls(() => listJson(list));
    expect(calls.filter(([v]) => items.includes(v as KObject))).toEqual([]);
  });

  it('PartialObjectMetadata and its list are exactly JSON.stringify of them, per meta.k8s.io version', () => {
    for (const v of ['v1', 'v1beta1']) {
      for (const obj of [...items, { kind: 'Thing' } as KObject]) expect(partialObjectJson(obj, v)).toBe(JSON.stringify(partialObject(obj, v)));
      const metadata = { resourceVersion: '9', continue: 'c' };
      const expected = { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${v}`, metadata, items: items.map((o) => partialObject(o, v)) };
      expect(partialListJson({ metadata, items }, v)).toBe(JSON.stringify(expected));
    }
  });

  it.each(representations)('a watch event line carrying %s is exactly JSON.stringify of the event', (_, r) => {
    for (const type of ['ADDED', 'MODIFIED', 'DELETED'] as WatchEventType[]) {
      for (const obj of items as KObject[]) {
        expect(eventLine(type, obj, r)).toBe(`${JSON.stringify({ type, object: wire(obj, r) })}\n`);
        expect(encodeLine(type, obj, r)).toBe(`${JSON.stringify({ type, object: wire(obj, r) })}\n`);
      }
    }
  });

  it('never serves one version, event type or representation for another', () => {
    const v1 = stored('same', '10');
    const v2 = stored('same', '11');
    const lines = new Set<string>();
    for (const obj of [v1, v2]) {
      for (const type of ['ADDED', 'MODIFIED', 'DELETED'] as WatchEventType[]) {
        for (const [, r] of representations) {
          const line = eventLine(type, obj, r);
          expect(line).toBe(`${JSON.stringify({ type, object: wire(obj, r) })}\n`);
          lines.add(line);
        }
      }
    }
    expect(lines.size).toBe(2 * 3 * 3);
  });

  it.each(representations)('N watchers of one event (%s) share one encoding', (_, r) => {
    const obj = parseFrozen(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: `fan-${r.kind}`, resourceVersion: '12' }, data: { k: 'v' } }));
    const watchers = 50;
    const received: string[] = [];
    const calls = stringifyCalls(() => {
      for (let i = 0; i < watchers; i++) received.push(eventLine('MODIFIED', obj, r));
    });
    expect(new Set(received)).toEqual(new Set([`${JSON.stringify({ type: 'MODIFIED', object: wire(obj, r) })}\n`]));
    // Everything encoded for those 50 deliveries, once: the event type, and for a PartialObjectMetadata
    // its apiVersion and the object's metadata (the object's own text is the store's).
    const expected = r.kind === 'partial' ? ['MODIFIED', `meta.k8s.io/${r.metaVersion}`, obj.metadata] : ['MODIFIED'];
    expect(calls.map(([v]) => v).sort()).toEqual(expected.sort());
  });

  it('encodes objects that are not stored afresh every time', () => {
    const draft: KObject = { kind: 'ConfigMap', metadata: { name: 'd', resourceVersion: '1' } };
    expect(eventLine('ADDED', draft, { kind: 'object' })).toContain('"resourceVersion":"1"');
    (draft.metadata as { resourceVersion: string }).resourceVersion = '2';
    expect(eventLine('ADDED', draft, { kind: 'object' })).toContain('"resourceVersion":"2"');
    expect(eventLine('ADDED', draft, { kind: 'partial', metaVersion: 'v1' })).toContain('"resourceVersion":"2"');
  });
});
