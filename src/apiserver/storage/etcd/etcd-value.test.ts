import { jest } from '@jest/globals';
import type { KObject } from '../../../api/meta.js';
import { compactJson } from '../../../lib/frozen-json.js';
import { decode, encode } from './etcd-value.js';

const text = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));

describe('etcd values', () => {
  it.each<[string, KObject]>([
    ['a typical object', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', annotations: { 'x/"metadata":{': '}]' } }, data: { k: 'v' } }],
    ['empty metadata', { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: {} }],
    ['metadata after a field holding its own', { spec: { template: { metadata: { name: 'inner' } } }, metadata: { name: 'outer', labels: { a: 'b' } } }],
    ['the key inside a string first', { kind: 'Odd', note: '"metadata":{', metadata: { name: 'x' } }],
    ['no metadata', { kind: 'Bare', data: [1, { a: [] }] }],
    ['a resourceVersion elsewhere', { kind: 'Event', metadata: { name: 'e' }, involvedObject: { kind: 'Pod', resourceVersion: '12' } }],
  ])('decodes %s with its resourceVersion, frozen, and sends the text a serialisation would give', (_, object) => {
    const decoded = decode(encode({ ...object, metadata: object.metadata && { ...object.metadata, resourceVersion: '3' } }), 42);
    const expected = { ...object, metadata: { ...object.metadata, resourceVersion: '42' } };
    expect(decoded).toEqual(expected);
    expect(Object.isFrozen(decoded) && Object.isFrozen(decoded.metadata)).toBe(true);
    expect(compactJson(decoded)).toBe(JSON.stringify(decoded));
    expect(Object.keys(decoded.metadata ?? {}).at(-1)).toBe('resourceVersion');
  });

  it('serialises a decoded object without stringifying it again', () => {
    const decoded = decode(encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', managedFields: [{ manager: 'm' }] } }), 5);
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(compactJson(decoded)).toBe('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[{"manager":"m"}],"resourceVersion":"5"}}');
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });

  it('reads what another writer stored with spaces', () => {
    const spaced = Buffer.from(JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'a' } }, null, 2));
    const decoded = decode(spaced, 7);
    expect(decoded).toEqual({ kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '7' } });
    expect(compactJson(decoded)).toBe(JSON.stringify(decoded));
    expect(decode(text({ kind: 'X' }), 8).metadata).toEqual({ resourceVersion: '8' });
  });
});
