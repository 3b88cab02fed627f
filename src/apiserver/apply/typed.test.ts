import { prng } from '../../../test/helpers/prng.js';
import { randomJson } from '../../../test/helpers/random-json.js';
import type { Schema } from '../openapi/builder.js';
import { schemaFor } from '../openapi/schema-for.js';
import { fieldSetOf, fieldsV1Of } from './typed.js';

/** A struct with every kind of field a walk distinguishes: keyed, set and atomic lists, atomic and free maps. */
const item: Schema = { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' }, sub: { type: 'object' } } };
const schema: Schema = {
  type: 'object',
  properties: {
    keyed: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name', 'port'], items: item },
    set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    atomic: { type: 'array', items: { type: 'string' } },
    sealed: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
    free: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

/** The FieldsV1 text through the field set, the reference the one-walk build must equal to the byte. */
const viaSet = (value: unknown, s: Schema | undefined): string => JSON.stringify(fieldSetOf(value, s).toFieldsV1());
const direct = (value: unknown, s: Schema | undefined): string => JSON.stringify(fieldsV1Of(value, s));

describe('fieldsV1Of', () => {
  it("builds a ConfigMap's and a CSR's FieldsV1 as the field set does", () => {
    const cm = { metadata: { labels: { app: 'a' }, annotations: {} }, data: { payload: 'x', other: 'y' } };
    expect(direct(cm, schemaFor('', 'v1', 'ConfigMap'))).toBe('{"f:metadata":{"f:labels":{"f:app":{}},"f:annotations":{}},"f:data":{"f:payload":{},"f:other":{}}}');
    const csr = {
      spec: { request: 'AAAA', signerName: 'example.com/s', usages: ['client auth'] },
      status: { conditions: [{ type: 'Approved', status: 'True' }] },
    };
    const s = schemaFor('certificates.k8s.io', 'v1', 'CertificateSigningRequest');
    expect(direct(csr, s)).toBe(viaSet(csr, s));
    expect(direct(csr, s)).toContain('"k:{\\"type\\":\\"Approved\\"}":{".":{},"f:type":{},"f:status":{}}');
  });

  it('lists `.` first for a keyed item with fields, also when a repeat of it came first without them', () => {
    const value = { keyed: [{}, { sub: { a: '1' } }, { name: 'x', port: 1 }, { name: 'x', port: 1, sub: {} }], set: ['a', 'a', 'b'] };
    expect(direct(value, schema)).toBe(viaSet(value, schema));
    expect(direct(value, schema)).toBe(
      '{"f:keyed":{"k:{}":{".":{},"f:sub":{"f:a":{}}},"k:{\\"name\\":\\"x\\",\\"port\\":1}":{".":{},"f:name":{},"f:port":{},"f:sub":{}}},"f:set":{"v:\\"a\\"":{},"v:\\"b\\"":{}}}',
    );
    // A field with fields below it in one repeat of an item and a leaf in a later one: a member with fields.
    const repeated = { keyed: [{ name: 'x', port: 1, sub: { a: '1' } }, { name: 'x', port: 1, sub: 's' }] };
    expect(direct(repeated, schema)).toBe('{"f:keyed":{"k:{\\"name\\":\\"x\\",\\"port\\":1}":{".":{},"f:name":{},"f:port":{},"f:sub":{".":{},"f:a":{}}}}}');
    expect(direct(repeated, schema)).toBe(viaSet(repeated, schema));
  });

  it('makes no node for a field whose fields are all undefined, and an empty object is a leaf', () => {
    const value = { free: { gone: undefined }, sealed: { a: { b: 1 } }, atomic: [], other: {} };
    expect(direct(value, schema)).toBe('{"f:sealed":{},"f:atomic":{},"f:other":{}}');
    expect(direct(value, schema)).toBe(viaSet(value, schema));
    expect(direct('scalar', schema)).toBe('{}');
  });

  it('agrees with the field set on random values, key order included', () => {
    const random = prng(29);
    const { pick, value } = randomJson(random);
    const field = (name: string): unknown => {
      if (name === 'keyed') return Array.from({ length: Math.floor(random() * 5) }, () => ({ name: pick(['x', 'y', undefined]), port: pick([1, 2]), sub: value(2) }));
      if (name === 'set') return Array.from({ length: Math.floor(random() * 4) }, () => pick(['a', 'b', 'c']));
      return value(1);
    };
    for (let i = 0; i < 2000; i++) {
      const v: Record<string, unknown> = {};
      for (const name of ['keyed', 'set', 'atomic', 'sealed', 'free', 'extra']) if (random() < 0.6) v[name] = field(name);
      expect(direct(v, schema)).toBe(viaSet(v, schema));
    }
  });
});
