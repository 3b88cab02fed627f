import { jest } from '@jest/globals';
import type { KObject } from '../../api/meta.js';
import { compactJson } from '../../lib/frozen-json.js';
import { adoptFrozen, stamp } from './frozen.js';

describe('adoptFrozen', () => {
  it('keeps a plain handed-over object as the stored one, frozen, with its text, without parsing it', () => {
    const object: KObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { app: 'x' } }, data: { k: 'v' } };
    const stamped = stamp(object, 7);
    const json = JSON.stringify(stamped);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const stored = adoptFrozen(stamped, json);
      expect(stored).toBe(stamped);
      expect(parse).not.toHaveBeenCalled();
      expect(stored.data).toBe(object.data);
      expect(Object.isFrozen(stored.metadata?.labels)).toBe(true);
      expect(compactJson(stored)).toBe(json);
    } finally {
      parse.mockRestore();
    }
    // The caller's top level and metadata are not the stored ones: stamping copies them.
    expect(object.metadata?.resourceVersion).toBeUndefined();
    expect(Object.isFrozen(object)).toBe(false);
  });

  it('parses the text of an object that is not plain JSON, which is what it reads as after a restart', () => {
    const object = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', labels: undefined }, eventTime: new Date(0) } as unknown as KObject;
    const stamped = stamp(object, 3);
    const json = JSON.stringify(stamped);
    const stored = adoptFrozen(stamped, json);
    expect(stored).not.toBe(stamped);
    expect(stored).toStrictEqual(JSON.parse(json));
    expect(Object.isFrozen(stored)).toBe(true);
    expect(compactJson(stored)).toBe(json);
  });
});
