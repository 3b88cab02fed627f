import type { KObject } from '../../api/meta.js';
import { deepEqual } from '../../lib/json-value.js';
import { prng } from '../../../test/helpers/prng.js';
import { FIELD_KINDS_SCHEMA, randomJson } from '../../../test/helpers/random-json.js';
import type { Schema } from '../openapi/builder.js';
import { schemaFor } from '../openapi/schema-for.js';
import { FieldSet } from './field-set.js';
import { objectFieldSet } from './managers.js';
import { valueAt } from './typed.js';
import { compareObjects, trackUpdate } from './update.js';

const CSR = { group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest' };
const schema = schemaFor(CSR.group, CSR.version, CSR.kind);
const approved = { type: 'Approved', status: 'True', reason: 'AutoApproved', lastUpdateTime: '2024-05-01T10:00:00Z' };

function csr(status: Record<string, unknown>, labels?: Record<string, unknown>): KObject {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'a', resourceVersion: '7', ...(labels ? { labels: labels as Record<string, string> } : {}) },
    spec: { request: 'AAAA', signerName: 'example.com/s', usages: ['client auth'] },
    status,
  };
}

/** The comparison's sets as FieldsV1 JSON, whose key order is what managedFields store. */
function compared(old: KObject | undefined, next: KObject): { changed: string; removed: string } {
  const { changed, removed } = compareObjects(old, next, schema);
  return { changed: JSON.stringify(changed.toFieldsV1()), removed: JSON.stringify(removed.toFieldsV1()) };
}

describe('compareObjects', () => {
  it('reports only the field a status write added, not the unchanged siblings of its map', () => {
    const out = compared(csr({ conditions: [approved] }), csr({ conditions: [approved], certificate: 'Q0VSVA==' }));
    expect(out).toEqual({ changed: '{"f:status":{"f:certificate":{}}}', removed: '{}' });
  });

  it('reports a map left with only equal fields as unchanged, and one emptied to {} as a new leaf', () => {
    expect(compared(csr({ conditions: [approved] }), csr({ conditions: [approved] }, { app: 'x' }))).toEqual({
      changed: '{"f:metadata":{"f:labels":{"f:app":{}}}}',
      removed: '{}',
    });
    // {} is a leaf of its own: going from a populated map to an empty one removes the fields and adds the map.
    expect(compared(csr({ conditions: [approved] }), csr({}))).toEqual({
      changed: '{"f:status":{}}',
      removed: '{"f:status":{"f:conditions":{"k:{\\"type\\":\\"Approved\\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{},"f:lastUpdateTime":{}}}}}',
    });
  });

  it('takes the status fields removed by a write out, keeping the equal ones', () => {
    const out = compared(csr({ conditions: [approved], certificate: 'Q0VSVA==' }), csr({ conditions: [approved] }));
    expect(out).toEqual({ changed: '{}', removed: '{"f:status":{"f:certificate":{}}}' });
  });

  it('compares changed leaves inside keyed list items by value', () => {
    const out = compared(csr({ conditions: [approved] }), csr({ conditions: [{ ...approved, reason: 'Other' }] }));
    expect(out).toEqual({ changed: '{"f:status":{"f:conditions":{"k:{\\"type\\":\\"Approved\\"}":{"f:reason":{}}}}}', removed: '{}' });
  });

  it('treats a field set to undefined as absent, and a map holding only such a field as no leaf', () => {
    const before = csr({ conditions: [approved] }, {});
    const after = csr({ conditions: [approved] }, { gone: undefined });
    // metadata.labels: {} → a leaf before; { gone: undefined } → walked, nothing inside after.
    expect(compared({ ...before, metadata: { name: 'a', labels: {} } }, after)).toEqual({
      changed: '{}',
      removed: '{"f:metadata":{"f:labels":{}}}',
    });
  });

  it('keeps a "__proto__" field name as data', () => {
    const old = csr({ conditions: [approved] }, JSON.parse('{"__proto__":"a","b":"1"}') as Record<string, unknown>);
    const next = csr({ conditions: [approved] }, JSON.parse('{"__proto__":"z","b":"1"}') as Record<string, unknown>);
    expect(compared(old, next)).toEqual({ changed: '{"f:metadata":{"f:labels":{"f:__proto__":{}}}}', removed: '{}' });
  });
});

describe('trackUpdate on a subresource write', () => {
  it('records the writer with its subresource, owning only what it added, and leaves the others', () => {
    const old = csr({ conditions: [approved] });
    old.metadata!.managedFields = [
      { manager: 'kubelet', operation: 'Update', apiVersion: 'certificates.k8s.io/v1', time: '2024-05-01T09:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:request': {} } } },
      { manager: 'ctl', operation: 'Update', apiVersion: 'certificates.k8s.io/v1', time: '2024-05-01T09:30:00Z', subresource: 'approval', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:conditions': {} } } },
    ];
    const next = csr({ conditions: [approved], certificate: 'Q0VSVA==' });
    next.metadata!.managedFields = old.metadata!.managedFields;
    trackUpdate(old, next, CSR, { manager: 'ctl', apiVersion: 'certificates.k8s.io/v1', time: '2024-05-01T10:00:00Z', subresource: 'status' });
    expect(next.metadata?.managedFields).toEqual([
      ...old.metadata!.managedFields,
      { manager: 'ctl', operation: 'Update', apiVersion: 'certificates.k8s.io/v1', time: '2024-05-01T10:00:00Z', subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:certificate': {} } } },
    ]);
  });
});

/** The comparison path by path, each leaf's values looked up from the root: the reference the tree walk must equal. */
function comparedPathByPath(oldObj: KObject, newObj: KObject, s: Schema | undefined): { changed: string; removed: string } {
  const newSet = objectFieldSet(newObj, s);
  const oldSet = objectFieldSet(oldObj, s);
  const changed = new FieldSet();
  for (const p of newSet.paths()) {
    if (!oldSet.has(p)) changed.insert(p);
    else if ((newSet.at(p)?.children.size ?? 0) === 0 && !deepEqual(valueAt(oldObj, p, s).value, valueAt(newObj, p, s).value)) changed.insert(p);
  }
  const removed = new FieldSet();
  for (const p of oldSet.paths()) if (!newSet.has(p)) removed.insert(p);
  return { changed: JSON.stringify(changed.toFieldsV1()), removed: JSON.stringify(removed.toFieldsV1()) };
}

describe('compareObjects against the path-by-path comparison', () => {
  const random = prng(2911);
  const { pick, value, field } = randomJson(random);
  /** A copy of `v` with a few random edits: values replaced, fields added or dropped, list items reordered. */
  const edit = (v: unknown, depth: number): unknown => {
    if (random() < 0.15) return value(depth);
    if (Array.isArray(v)) return random() < 0.3 ? [...v].reverse() : v.map((x) => (random() < 0.3 ? edit(x, depth + 1) : x));
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (random() > 0.1) out[k] = random() < 0.4 ? edit(x, depth + 1) : x;
    if (random() < 0.2) out[pick(['name', 'port', 'sub', 'a', 'b', 'c'])] = value(depth + 1);
    return out;
  };

  it('gives the same changed and removed sets, in the same order, on random related objects', () => {
    const schema = FIELD_KINDS_SCHEMA;
    let differing = 0;
    for (let i = 0; i < 1500; i++) {
      const old: Record<string, unknown> = {};
      for (const name of ['keyed', 'set', 'atomic', 'sealed', 'free', 'extra']) if (random() < 0.6) old[name] = field(name);
      const next = edit(old, 0) as KObject;
      const want = comparedPathByPath(old, next, schema);
      const { changed, removed } = compareObjects(old, next, schema);
      expect({ changed: JSON.stringify(changed.toFieldsV1()), removed: JSON.stringify(removed.toFieldsV1()) }).toEqual(want);
      if (want.changed !== '{}' || want.removed !== '{}') differing++;
    }
    // The pairs exercise both answers, not only "nothing changed".
    expect(differing).toBeGreaterThan(500);
  });

  it('gives the same sets for CSR writes through /approval and /status', () => {
    const created = csr({});
    const approvedCsr = csr({ conditions: [approved] }, { app: 'x' });
    const issued = csr({ conditions: [approved, { type: 'Failed', status: 'False' }], certificate: 'Q0VSVA==' });
    for (const [a, b] of [[created, approvedCsr], [approvedCsr, issued], [issued, approvedCsr], [issued, created]] as const) {
      const { changed, removed } = compareObjects(a, b, schema);
      expect({ changed: JSON.stringify(changed.toFieldsV1()), removed: JSON.stringify(removed.toFieldsV1()) }).toEqual(comparedPathByPath(a, b, schema));
    }
  });
});
