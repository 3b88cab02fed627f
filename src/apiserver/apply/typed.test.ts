import { prng } from '../../../test/helpers/prng.js';
import { FIELD_KINDS_SCHEMA, randomJson } from '../../../test/helpers/random-json.js';
import type { Schema } from '../openapi/builder.js';
import { schemaFor } from '../openapi/schema-for.js';
import { fieldSetOf, fieldsV1Of } from './typed.js';

const schema = FIELD_KINDS_SCHEMA;

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
    const { field } = randomJson(random);
    for (let i = 0; i < 2000; i++) {
      const v: Record<string, unknown> = {};
      for (const name of ['keyed', 'set', 'atomic', 'sealed', 'free', 'extra']) if (random() < 0.6) v[name] = field(name);
      expect(direct(v, schema)).toBe(viaSet(v, schema));
    }
  });
});
