import type { KObject } from '../../api/meta.js';
import { ApiError } from '../http/errors.js';
import { FieldSet, pathString } from './field-set.js';
import { serverSideApply, trackUpdate } from './index.js';

const SA = { group: '', version: 'v1', kind: 'ServiceAccount' };
const CSR = { group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest' };
const now = new Date('2024-05-01T10:00:00.500Z');
const seed = (): KObject => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', namespace: 'ns' } });

const saConfig = (labels: Record<string, string>, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', labels }, ...extra });

function applyAs(live: KObject, manager: string, body: string, force = false): KObject {
  return serverSideApply(live, body, SA, { manager, force, now });
}

function caught(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

describe('serverSideApply', () => {
  it('creates from a seed and records an Apply entry with the applied fields only', () => {
    const out = applyAs(seed(), 'a', saConfig({ app: 'x' }, { secrets: [{ name: 's1' }], automountServiceAccountToken: false }));
    expect(out.metadata?.labels).toEqual({ app: 'x' });
    expect(out.metadata?.managedFields).toEqual([
      {
        manager: 'a',
        operation: 'Apply',
        apiVersion: 'v1',
        time: '2024-05-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:secrets': { 'k:{"name":"s1"}': { '.': {}, 'f:name': {} } },
          'f:automountServiceAccountToken': {},
        },
      },
    ]);
  });

  it('conflicts when another applier owns a field with a different value, and force takes it over', () => {
    const live = applyAs(seed(), 'a', saConfig({ app: 'x', team: 't' }));
    const err = caught(() => applyAs(live, 'b', saConfig({ app: 'y' })));
    expect(err.code).toBe(409);
    expect(err.toStatus()).toMatchObject({
      reason: 'Conflict',
      message: 'Apply failed with 1 conflict: conflict with "a": .metadata.labels.app',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.metadata.labels.app' }] },
    });

    const forced = applyAs(live, 'b', saConfig({ app: 'y' }), true);
    expect(forced.metadata?.labels).toEqual({ app: 'y', team: 't' });
    const owners = Object.fromEntries((forced.metadata?.managedFields ?? []).map((e) => [e.manager, e.fieldsV1]));
    expect(owners).toEqual({
      a: { 'f:metadata': { 'f:labels': { 'f:team': {} } } },
      b: { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
    });
  });

  it('groups several conflicts by manager in the message', () => {
    const live = applyAs(seed(), 'a', saConfig({ x: '1', y: '1' }));
    const err = caught(() => applyAs(live, 'b', saConfig({ x: '2', y: '2' })));
    expect(err.message).toBe('Apply failed with 2 conflicts: conflicts with "a":\n- .metadata.labels.x\n- .metadata.labels.y');
  });

  it('shares ownership of equal values and removes only fields nobody else owns', () => {
    let live = applyAs(seed(), 'a', saConfig({ shared: 'v', mine: 'm' }));
    live = applyAs(live, 'b', saConfig({ shared: 'v' }));
    live = applyAs(live, 'a', saConfig({}, { automountServiceAccountToken: true }));
    expect(live.metadata?.labels).toEqual({ shared: 'v' });
    expect(live.automountServiceAccountToken).toBe(true);
    live = applyAs(live, 'b', JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa' } }));
    expect(live.metadata?.labels).toBeUndefined();
    expect(live.metadata?.managedFields?.map((e) => e.manager)).toEqual(['a']);
  });

  it('merges map lists per key and takes them from the OpenAPI list type (CSR conditions by type)', () => {
    const csr: KObject = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'c' },
      spec: { usages: ['client auth'], signerName: 'example.com/s', request: 'AA==' },
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'R' }] },
    };
    const body = JSON.stringify({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      status: { conditions: [{ type: 'Failed', status: 'True' }] },
      spec: { usages: ['digital signature'] },
    });
    const out = serverSideApply(csr, body, CSR, { manager: 'ctl', force: false, now });
    expect((out.status as { conditions: unknown[] }).conditions).toEqual([
      { type: 'Approved', status: 'True', reason: 'R' },
      { type: 'Failed', status: 'True' },
    ]);
    expect((out.spec as { usages: string[] }).usages).toEqual(['digital signature']);
    expect(out.metadata?.managedFields?.[0]?.fieldsV1).toEqual({
      'f:spec': { 'f:usages': {} },
      'f:status': { 'f:conditions': { 'k:{"type":"Failed"}': { '.': {}, 'f:type': {}, 'f:status': {} } } },
    });
  });

  it('accepts YAML and rejects a wrong apiVersion, managedFields and undeclared fields', () => {
    const out = applyAs(seed(), 'a', 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n  labels: {k: v}\n');
    expect(out.metadata?.labels).toEqual({ k: 'v' });
    expect(caught(() => applyAs(seed(), 'a', '{"apiVersion":"v2","kind":"ServiceAccount"}')).message).toBe(
      'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1',
    );
    expect(caught(() => applyAs(seed(), 'a', saConfig({}).replace('"labels"', '"managedFields":[],"labels"'))).message).toBe(
      'metadata.managedFields must be nil',
    );
    const undeclared = caught(() => applyAs(seed(), 'a', saConfig({}, { foo: 1 })));
    expect(undeclared.code).toBe(400);
    expect(undeclared.message).toBe('failed to create typed patch object (/sa; /v1, Kind=ServiceAccount): .foo: field not declared in schema');
  });
});

describe('trackUpdate', () => {
  it('gives an updater the fields it changes, without conflict, and names it with its apiVersion in conflicts', () => {
    const applied = applyAs(seed(), 'a', saConfig({ app: 'x', keep: 'k' }));
    const next = structuredClone(applied);
    next.metadata = { ...next.metadata, labels: { app: 'changed', keep: 'k' } };
    trackUpdate(applied, next, SA, { manager: 'kubectl-edit', apiVersion: 'v1', time: '2024-05-01T11:00:00Z' });
    const byManager = Object.fromEntries((next.metadata?.managedFields ?? []).map((e) => [e.manager, e]));
    expect(byManager['kubectl-edit']).toMatchObject({ operation: 'Update', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } } });
    expect(byManager.a?.fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { 'f:keep': {} } } });

    const err = caught(() => applyAs(next, 'a', saConfig({ app: 'x', keep: 'k' })));
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .metadata.labels.app');
  });

  it('records everything a create sets and keeps managedFields a client rewrote', () => {
    const created = seed();
    created.metadata = { ...created.metadata, labels: { a: 'b' } };
    trackUpdate(undefined, created, SA, { manager: 'kubectl-create', apiVersion: 'v1', time: 't' });
    expect(created.metadata?.managedFields?.[0]?.fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { 'f:a': {} } } });

    const migrated = structuredClone(created);
    migrated.metadata = { ...migrated.metadata, managedFields: [{ ...created.metadata?.managedFields?.[0], manager: 'kubectl', operation: 'Apply' }] };
    trackUpdate(created, migrated, SA, { manager: 'kubectl', apiVersion: 'v1', time: 't2' });
    expect(migrated.metadata?.managedFields?.map((e) => `${e.manager}/${e.operation}`)).toEqual(['kubectl/Apply']);
  });
});

describe('FieldSet', () => {
  it('round-trips FieldsV1 and prints paths as upstream', () => {
    const json = { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } }, 'f:l': { 'k:{"name":"n","port":80}': { '.': {}, 'f:x': {} }, 'v:"s"': {} } };
    const set = FieldSet.fromFieldsV1(json);
    expect(set.toFieldsV1()).toEqual(json);
    expect(set.paths().map(pathString)).toEqual([
      '.metadata.labels',
      '.metadata.labels.a',
      '.l[name="n",port=80]',
      '.l[name="n",port=80].x',
      '.l[="s"]',
    ]);
  });
});

describe('client-side to server-side apply', () => {
  const LAST = 'kubectl.kubernetes.io/last-applied-configuration';

  it('lets kubectl take over fields its last-applied configuration still describes', () => {
    const live = seed();
    live.metadata = { ...live.metadata, labels: { a: '1', b: '1' }, annotations: { [LAST]: JSON.stringify({ metadata: { labels: { a: '1' } } }) } };
    trackUpdate(undefined, live, SA, { manager: 'kubectl-client-side-apply', apiVersion: 'v1', time: 't' });

    const out = applyAs(live, 'kubectl', saConfig({ a: '2' }));
    expect(out.metadata?.labels).toEqual({ a: '2', b: '1' });
    expect(JSON.parse(out.metadata?.annotations?.[LAST] ?? '')).toMatchObject({ metadata: { labels: { a: '2' } } });
    // b was never in the annotation: changing it still conflicts, and other managers get no bridge.
    expect(caught(() => applyAs(live, 'kubectl', saConfig({ a: '1', b: '2' }))).message).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .metadata.labels.b',
    );
    expect(caught(() => applyAs(live, 'other', saConfig({ a: '2' }))).code).toBe(409);
  });
});
