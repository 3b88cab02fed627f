import { jest } from '@jest/globals';
import type { KObject } from '../../../api/meta.js';
import { compactJson } from '../../../lib/frozen-json.js';
import { adopt, decode, encode, EtcdValues, RelayedValue } from './etcd-value.js';

/** A watched value as a replica without encryption at rest relays it. */
const relay = (value: Uint8Array, revision: number) => new EtcdValues(undefined).relay('/configmaps/x', value, revision)!;

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

  it.each<[string, KObject, boolean]>([
    ['a typical object', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '3', labels: { x: 'y' } }, data: { k: 'v' } }, true],
    ['empty metadata', { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: { k: 'v' } }, true],
    ['no metadata', { kind: 'Bare', data: { k: [1, { a: [] }] } } as unknown as KObject, true],
    ['a resourceVersion elsewhere', { kind: 'Event', metadata: { name: 'e' }, data: { resourceVersion: '12' } }, false],
    ['an undefined field', { kind: 'X', metadata: { name: 'u', labels: undefined }, data: { k: 'v' } }, false],
    ['a Date', { kind: 'X', metadata: { name: 'd' }, data: { at: new Date('2026-01-02T03:04:05Z') } } as unknown as KObject, false],
  ])('adopts a handed-over %s as decode would read it back', (_, handed, kept) => {
    const data = handed.data as object;
    const json = encode(handed);
    const adopted = adopt(handed, json, 42);
    const decoded = decode(json, 42);
    expect(adopted).toStrictEqual(decoded);
    expect(compactJson(adopted)).toBe(compactJson(decoded));
    expect(compactJson(adopted)).toBe(JSON.stringify(adopted));
    expect(Object.isFrozen(adopted) && Object.isFrozen(adopted.metadata) && Object.isFrozen(adopted.data)).toBe(true);
    expect(adopted.data === data).toBe(kept);
    // The writer's own top level and metadata are left as they were.
    expect(Object.isFrozen(handed) || Object.isFrozen(handed.metadata ?? {})).toBe(false);
    expect(handed.metadata?.resourceVersion).not.toBe('42');
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

  it('relays a value as its stamped text, parsed only when its object is read, then once', () => {
    const object: KObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'r', namespace: 'ns' }, data: { k: 'v' } };
    const json = Buffer.from(encode(object));
    const decoded = decode(json, 9);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const relayed = relay(json, 9) as RelayedValue;
      expect(relayed).toBeInstanceOf(RelayedValue);
      expect(relayed.revision).toBe(9);
      expect(relayed.text).toBe(compactJson(decoded));
      expect([relayed.built, parse.mock.calls.length]).toEqual([undefined, 0]);
      const read = relayed.object;
      expect(read).toStrictEqual(decoded);
      expect(Object.isFrozen(read) && Object.isFrozen(read.metadata)).toBe(true);
      expect(compactJson(read)).toBe(relayed.text);
      expect(relayed.object).toBe(read);
      expect(relayed.built).toBe(read);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it("settles a relayed value on the writer's adopted object when nothing has parsed it, and only then", () => {
    const handed: KObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w', resourceVersion: '3' }, data: { k: 'v' } };
    const json = encode(handed);
    const relayed = relay(Buffer.from(json), 12) as RelayedValue;
    const adopted = relayed.settle(adopt(handed, json, 12, relayed.text));
    expect(adopted.data).toBe(handed.data);
    expect(relayed.object).toBe(adopted);
    expect(compactJson(adopted)).toBe(relayed.text);
    const other = relay(Buffer.from(json), 12) as RelayedValue;
    const parsed = other.object;
    expect(other.settle(adopt(handed, json, 12, other.text))).toBe(parsed);
  });

  it.each<[string, Buffer]>([
    ['a resourceVersion elsewhere', text({ kind: 'Event', metadata: { name: 'e' }, involvedObject: { resourceVersion: '12' } })],
    ['text spaced over lines', Buffer.from(JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'a' } }, null, 2))],
    ['a line break inside', Buffer.from('{"kind":"ConfigMap","metadata":{"name":"a"},\n"data":{}}')],
  ])('decodes a value at once when its text cannot go out as it is: %s', (_, value) => {
    const relayed = relay(value, 4);
    expect(relayed).not.toBeInstanceOf(RelayedValue);
    expect(relayed.object).toStrictEqual(decode(value, 4));
    expect(compactJson(relayed.object)).toBe(JSON.stringify(relayed.object));
  });

  it("relays a value this replica encoded itself (the text of its write in flight) to the same text, and refuses any other that is not JSON", () => {
    const json = encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '2' }, data: { k: 'v' } });
    const own = new EtcdValues(undefined).relay('/configmaps/a', Buffer.from(json), 9, json) as RelayedValue;
    expect(own).toBeInstanceOf(RelayedValue);
    expect(own.text).toBe((relay(Buffer.from(json), 9) as RelayedValue).text);
    expect(own.object).toStrictEqual(decode(json, 9));
    const cut = Buffer.from('{"kind":"ConfigMap","metadata":{"name":"a"},"data":');
    expect(() => relay(cut, 9)).toThrow(/not JSON/);
    expect(() => new EtcdValues(undefined).relay('/configmaps/a', cut, 9, json)).toThrow(/not JSON/);
  });
});
