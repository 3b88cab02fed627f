import { describeWithFixtures, readFixtureJson } from '../../../test/helpers/fixtures.js';
import type { KObject } from '../../api/meta.js';
import { ApiError } from '../http/errors.js';
import { applyPatch, STRATEGIC_MERGE_PATCH } from './index.js';
import { patchSchemaFor } from './merge-keys.js';
import { strategicMergePatch } from './strategic-merge-patch.js';

const fixture = (name: string): KObject => readFixtureJson<KObject>(name);

const CORE = { group: '', version: 'v1' };
const smp = (obj: KObject, patch: unknown, kind: string, group = ''): KObject =>
  applyPatch(STRATEGIC_MERGE_PATCH, obj, JSON.stringify(patch), { ...CORE, group, kind });

function smpError(obj: KObject, patch: unknown, kind = 'Pod'): ApiError {
  try {
    smp(obj, patch, kind);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('patch applied');
}

describeWithFixtures('strategic merge patch on upstream fixtures', () => {
  it('merges ServiceAccount secrets by name and never touches the original', () => {
    const sa = Object.freeze(fixture('core.v1.ServiceAccount.json'));
    const out = smp(sa, { secrets: [{ name: 'nameValue', namespace: 'other' }, { name: 'new' }] }, 'ServiceAccount');
    expect(out.secrets).toEqual([
      { kind: 'kindValue', namespace: 'other', name: 'nameValue', uid: 'uidValue', apiVersion: 'apiVersionValue', resourceVersion: 'resourceVersionValue', fieldPath: 'fieldPathValue' },
      { name: 'new' },
    ]);
    expect((sa.secrets as unknown[]).length).toBe(1);
    expect(out.automountServiceAccountToken).toBe(true);
  });

  it('deletes a ServiceAccount secret by key with $patch: delete', () => {
    const out = smp(fixture('core.v1.ServiceAccount.json'), { secrets: [{ name: 'nameValue', $patch: 'delete' }] }, 'ServiceAccount');
    expect(out.secrets).toEqual([]);
  });

  it('replaces ServiceAccount imagePullSecrets (no patch strategy upstream)', () => {
    const out = smp(fixture('core.v1.ServiceAccount.json'), { imagePullSecrets: [{ name: 'b' }] }, 'ServiceAccount');
    expect(out.imagePullSecrets).toEqual([{ name: 'b' }]);
  });

  it('replaces CSR status.conditions (listType=map is for SSA only) and spec.usages', () => {
    const csr = fixture('certificates.k8s.io.v1.CertificateSigningRequest.json');
    const approved = { type: 'Approved', status: 'True', reason: 'AutoApproved' };
    const out = smp(csr, { status: { conditions: [approved] }, spec: { usages: ['client auth'] } }, 'CertificateSigningRequest', 'certificates.k8s.io');
    expect((out.status as { conditions: unknown }).conditions).toEqual([approved]);
    expect((out.spec as { usages: unknown }).usages).toEqual(['client auth']);
    expect((out.spec as { signerName: string }).signerName).toBe('signerNameValue');
    expect((out.status as { certificate: string }).certificate).toBe('Ag==');
  });

  it('merges Pod containers by name and their env by name', () => {
    const pod = fixture('core.v1.Pod.json');
    const spec = pod.spec as { containers: { name: string; image: string; env: { name: string }[] }[] };
    const original = spec.containers[0];
    if (!original) throw new Error('fixture has a container');
    const out = smp(pod, { spec: { containers: [{ name: original.name, image: 'busybox', env: [{ name: 'NEW', value: '1' }] }] } }, 'Pod');
    const containers = (out.spec as typeof spec).containers;
    expect(containers).toHaveLength(spec.containers.length);
    expect(containers[0]?.image).toBe('busybox');
    expect(containers[0]?.env.map((e) => e.name)).toEqual(['NEW', ...original.env.map((e) => e.name)]);
    expect({ ...containers[0], image: original.image, env: original.env }).toEqual(original);
  });

  it('merges metadata finalizers as a set and honours $deleteFromPrimitiveList', () => {
    const sa = fixture('core.v1.ServiceAccount.json');
    const out = smp(sa, { metadata: { finalizers: ['finalizersValue', 'b'], labels: { labelsKey: null, x: 'y' } } }, 'ServiceAccount');
    expect(out.metadata?.finalizers).toEqual(['finalizersValue', 'b']);
    expect(out.metadata?.labels).toEqual({ x: 'y' });
    const removed = smp(out, { metadata: { '$deleteFromPrimitiveList/finalizers': ['finalizersValue'] } }, 'ServiceAccount');
    expect(removed.metadata?.finalizers).toEqual(['b']);
  });

  it('merges ownerReferences by uid', () => {
    const sa = fixture('core.v1.ServiceAccount.json');
    const out = smp(sa, { metadata: { ownerReferences: [{ uid: 'uidValue', controller: false }] } }, 'ServiceAccount');
    expect(out.metadata?.ownerReferences).toEqual([{ apiVersion: 'apiVersionValue', kind: 'kindValue', name: 'nameValue', uid: 'uidValue', controller: false, blockOwnerDeletion: true }]);
  });

  it('merges Node status.addresses by type', () => {
    const node = fixture('core.v1.Node.json');
    const before = (node.status as { addresses: { type: string; address: string }[] }).addresses;
    const type = before[0]?.type ?? '';
    const out = smp(node, { status: { addresses: [{ type, address: '10.0.0.9' }, { type: 'Hostname', address: 'n1' }] } }, 'Node');
    expect((out.status as { addresses: unknown }).addresses).toEqual([
      { type, address: '10.0.0.9' },
      { type: 'Hostname', address: 'n1' },
    ]);
  });

  it('replaces RBAC rules (atomic) and merges Secret data as a map', () => {
    const role = fixture('rbac.authorization.k8s.io.v1.Role.json');
    const rules = [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }];
    expect(smp(role, { rules }, 'Role', 'rbac.authorization.k8s.io').rules).toEqual(rules);
    const secret = fixture('core.v1.Secret.json');
    const out = smp(secret, { data: { extra: 'eA==' } }, 'Secret');
    expect(out.data).toEqual({ ...(secret.data as object), extra: 'eA==' });
  });
});

describe('strategic merge patch directives', () => {
  const schema = patchSchemaFor('', 'Pod');
  const pod = (): Record<string, unknown> => ({
    metadata: { name: 'p', labels: { a: '1', b: '2' }, finalizers: ['x', 'y'] },
    spec: { containers: [{ name: 'a', image: 'i1' }, { name: 'b', image: 'i2' }, { name: 'c', image: 'i3' }] },
  });
  const names = (o: Record<string, unknown>): string[] =>
    ((o.spec as { containers: { name: string }[] }).containers).map((c) => c.name);

  it('$patch: replace on a map and on a list', () => {
    const m = strategicMergePatch(pod(), { metadata: { labels: { $patch: 'replace', c: '3' } } }, schema);
    expect((m.metadata as { labels: unknown }).labels).toEqual({ c: '3' });
    const l = strategicMergePatch(pod(), { spec: { containers: [{ name: 'z', image: 'iz' }, { $patch: 'replace' }] } }, schema);
    expect(names(l)).toEqual(['z']);
  });

  it('$patch: delete on a map removes it; $patch: merge is tolerated', () => {
    const m = strategicMergePatch(pod(), { metadata: { labels: { $patch: 'delete' } } }, schema);
    expect((m.metadata as object)).not.toHaveProperty('labels');
    const g = strategicMergePatch(pod(), { metadata: { labels: { $patch: 'merge', c: '3' } } }, schema);
    expect((g.metadata as { labels: unknown }).labels).toEqual({ a: '1', b: '2', c: '3' });
  });

  it('$setElementOrder orders merged items; untouched server items keep their place', () => {
    const out = strategicMergePatch(pod(), { spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }], containers: [{ name: 'a', image: 'new' }] } }, schema);
    expect(names(out)).toEqual(['b', 'c', 'a']);
    const only = strategicMergePatch(pod(), { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } }, schema);
    expect(names(only)).toEqual(['b', 'a', 'c']);
  });

  it('puts items new to the server ahead of server-only items, as upstream', () => {
    const out = strategicMergePatch(pod(), { spec: { containers: [{ name: 'd', image: 'i4' }] } }, schema);
    expect(names(out)).toEqual(['d', 'a', 'b', 'c']);
  });

  it('$retainKeys clears unlisted keys', () => {
    const out = strategicMergePatch({ spec: { a: 1, b: 2, c: 3 } }, { spec: { $retainKeys: ['a', 'b'], b: 5 } }, undefined);
    expect(out).toEqual({ spec: { a: 1, b: 5 } });
  });

  it('ignores nulls for absent keys and strips directives from new values', () => {
    const out = strategicMergePatch({}, { metadata: { labels: { x: null, y: 'z' }, finalizers: ['f'] } }, schema);
    expect(out).toEqual({ metadata: { labels: { y: 'z' }, finalizers: ['f'] } });
  });

  it.each<[string, unknown, number, string]>([
    ['a list of lists', { spec: { containers: [[1]] } }, 422, 'the server rejected our request due to an error in our request'],
    ['retainKeys not a list', { spec: { $retainKeys: 'a' } }, 400, 'invalid patch format of retainKeys'],
    ['patch keys outside retainKeys', { spec: { $retainKeys: ['a'], b: 1 } }, 422, 'the server rejected our request due to an error in our request'],
    ['deleteFromPrimitiveList not a list', { metadata: { '$deleteFromPrimitiveList/finalizers': 'x' } }, 400, 'invalid patch format of primitive list'],
    ['setElementOrder not a list', { spec: { '$setElementOrder/containers': 'x' } }, 400, 'invalid patch format of setElementOrder list'],
    ['an element without its merge key', { spec: { containers: [{ image: 'x' }] } }, 400, 'map: {"image":"x"} does not contain declared merge key: name'],
    ['a delete without its merge key', { spec: { containers: [{ $patch: 'delete' }] } }, 400, 'map: {"$patch":"delete"} does not contain declared merge key: name'],
    ['an unknown $patch in a map', { metadata: { $patch: 'bogus' } }, 400, 'unknown patch type: bogus in map: {"$patch":"bogus"}'],
    ['mixed element types', { metadata: { finalizers: [{ a: 1 }] } }, 400, 'list element types are not identical'],
  ])('%s', (_name, patch, code, message) => {
    const err = smpError({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', finalizers: ['x'] }, spec: { containers: [{ name: 'a' }] } }, patch);
    expect(err.code).toBe(code);
    expect(err.message).toBe(message);
  });
});
