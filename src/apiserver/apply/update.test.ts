import type { KObject } from '../../api/meta.js';
import { schemaFor } from '../openapi/schema-for.js';
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
