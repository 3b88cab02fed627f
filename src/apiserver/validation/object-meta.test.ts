import { itWithFixtures, readFixtureJson } from '../../../test/helpers/fixtures.js';
import type { KObject, ObjectMeta } from '../../api/meta.js';
import { errors } from '../http/errors.js';
import { fieldErrorString } from '../http/field-errors.js';
import { validateLabelName, validatePathSegmentName, validateSubdomainName } from './names.js';
import { validateFieldManager, validateObjectMeta, validateObjectMetaUpdate } from './object-meta.js';

const fixture = (name: string): KObject => readFixtureJson<KObject>(name);

const texts = (meta: ObjectMeta, namespaced = true, nameValidator = validateSubdomainName): string[] =>
  validateObjectMeta(meta, { namespaced, nameValidator }).map(fieldErrorString);

describe('validateObjectMeta', () => {
  it('accepts a well-formed namespaced object', () => {
    expect(texts({ name: 'default', namespace: 'kube-system', labels: { app: 'x' }, finalizers: ['example.com/f'] })).toEqual([]);
  });

  it.each<[ObjectMeta, boolean, string[]]>([
    [{ namespace: 'ns' }, true, ['metadata.name: Required value: name or generateName is required']],
    [{ name: 'a' }, true, ['metadata.namespace: Required value']],
    [{ name: 'a', namespace: 'ns' }, false, ['metadata.namespace: Forbidden: not allowed on this type']],
    [{ name: 'a', namespace: 'Bad_NS' }, true, [expect.stringMatching(/^metadata\.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label/)]],
    [{ name: 'Bad', namespace: 'ns' }, true, [expect.stringMatching(/^metadata\.name: Invalid value: "Bad": a lowercase RFC 1123 subdomain/)]],
    [{ name: 'a', generateName: 'Bad-', namespace: 'ns' }, true, [expect.stringMatching(/^metadata\.generateName: Invalid value: "Bad-": /)]],
    [{ name: 'a', namespace: 'ns', generation: -1 }, true, ['metadata.generation: Invalid value: -1: must be greater than or equal to 0']],
    [{ name: 'a', namespace: 'ns', labels: { 'a b': 'c' } }, true, [expect.stringMatching(/^metadata\.labels: Invalid value: "a b": name part must consist/)]],
    [{ name: 'a', namespace: 'ns', labels: { a: '-c' } }, true, [expect.stringMatching(/^metadata\.labels: Invalid value: "-c": a valid label/)]],
    [{ name: 'a', namespace: 'ns', annotations: { 'Example.COM/Key': 'v' } }, true, []],
    [{ name: 'a', namespace: 'ns', annotations: { 'a/b/c': 'v' } }, true, [expect.stringMatching(/^metadata\.annotations: Invalid value: "a\/b\/c": a qualified name/)]],
    [{ name: 'a', namespace: 'ns', annotations: { big: 'x'.repeat(262142) } }, true, ['metadata.annotations: Too long: may not be more than 262144 bytes']],
    [{ name: 'a', namespace: 'ns', finalizers: ['orphan', 'foregroundDeletion'] }, true, ['metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set']],
    [{ name: 'a', namespace: 'ns', finalizers: ['bad finalizer'] }, true, [expect.stringMatching(/^metadata\.finalizers: Invalid value: "bad finalizer": name part/)]],
  ])('%j (namespaced %s)', (meta, namespaced, want) => {
    expect(texts(meta, namespaced)).toEqual(want);
  });

  it('allows exactly 256 KiB of annotations', () => {
    expect(texts({ name: 'a', namespace: 'ns', annotations: { big: 'x'.repeat(262141) } })).toEqual([]);
  });

  it('checks owner references', () => {
    const errs = texts({
      name: 'a',
      namespace: 'ns',
      ownerReferences: [
        { apiVersion: '', kind: '', name: '', uid: '' },
        { apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u1', controller: true },
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u2', controller: true },
      ],
    });
    expect(errs).toEqual([
      'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
      'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
      expect.stringMatching(/^metadata\.ownerReferences: Invalid value: .*: \/v1, Kind=Event is disallowed from being an owner$/),
      expect.stringMatching(/Only one reference can have Controller set to true\. Found "true" in references for Event\/e and ReplicaSet\/rs$/),
    ]);
  });

  itWithFixtures('validates the managedFields of the upstream fixture', () => {
    const meta = fixture('core.v1.ServiceAccount.json').metadata as ObjectMeta;
    const errs = texts({ ...meta, name: 'sa', namespace: 'ns', generateName: 'sa-' });
    expect(errs).toEqual([
      'metadata.managedFields[0].operation: Invalid value: "operationValue": must be `Apply` or `Update`',
      'metadata.managedFields[0].fieldsType: Invalid value: "fieldsTypeValue": must be `FieldsV1`',
    ]);
  });

  it('accepts free-form CSR names through the path-segment rule', () => {
    expect(texts({ name: 'node-csr-AbC_1:x' }, false, validatePathSegmentName)).toEqual([]);
    expect(texts({ name: '..' }, false, validatePathSegmentName)).toEqual([
      `metadata.name: Invalid value: "..": may not be '..'`,
    ]);
  });

  it('renders as upstream in an Invalid error', () => {
    const err = errors.invalid('Namespace', '', 'Bad', validateObjectMeta({ name: 'Bad' }, { namespaced: false, nameValidator: validateLabelName }));
    expect(err.code).toBe(422);
    expect(err.message).toMatch(/^Namespace "Bad" is invalid: metadata\.name: Invalid value: "Bad": a lowercase RFC 1123 label/);
  });
});

describe('validateObjectMetaUpdate', () => {
  const old: ObjectMeta = {
    name: 'a',
    namespace: 'ns',
    uid: 'u1',
    resourceVersion: '5',
    generation: 2,
    creationTimestamp: '2024-05-01T10:00:00Z',
    finalizers: ['example.com/a'],
  };

  it('accepts label and annotation changes', () => {
    expect(validateObjectMetaUpdate({ ...old, labels: { x: 'y' } }, old)).toEqual([]);
  });

  it('rejects changes to immutable fields and a decremented generation', () => {
    const errs = validateObjectMetaUpdate(
      { ...old, name: 'b', uid: 'u2', creationTimestamp: '2025-01-01T00:00:00Z', generation: 1, deletionGracePeriodSeconds: 30 },
      old,
    ).map(fieldErrorString);
    expect(errs).toEqual([
      'metadata.generation: Invalid value: 1: must not be decremented',
      'metadata.name: Invalid value: "b": field is immutable',
      'metadata.uid: Invalid value: "u2": field is immutable',
      'metadata.creationTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable',
      'metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable',
    ]);
  });

  it('forbids new finalizers once deletion started, but allows removing them', () => {
    const deleting = { ...old, deletionTimestamp: '2024-05-02T00:00:00Z' };
    expect(validateObjectMetaUpdate({ ...deleting, finalizers: [] }, deleting)).toEqual([]);
    expect(validateObjectMetaUpdate({ ...deleting, finalizers: ['example.com/a', 'z/b', 'y/c'] }, deleting).map(fieldErrorString)).toEqual([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"y/c", "z/b"}',
    ]);
    expect(validateObjectMetaUpdate({ ...old, finalizers: ['z/b'] }, old)).toEqual([]);
  });

  it('requires a resourceVersion only when asked', () => {
    const { resourceVersion: _rv, ...noRv } = old;
    expect(validateObjectMetaUpdate(noRv, old)).toEqual([]);
    expect(validateObjectMetaUpdate(noRv, old, { requireResourceVersion: true }).map(fieldErrorString)).toEqual([
      'metadata.resourceVersion: Invalid value: "": must be specified for an update',
    ]);
  });
});

describe('validateFieldManager', () => {
  it('limits length and printable characters', () => {
    expect(validateFieldManager('kubectl-client-side-apply', 'fieldManager')).toEqual([]);
    expect(validateFieldManager('x'.repeat(129), 'fieldManager').map(fieldErrorString)).toEqual([
      'fieldManager: Too long: may not be more than 128 bytes',
    ]);
    expect(validateFieldManager('a\u0007b', 'fieldManager').map(fieldErrorString)).toEqual([
      'fieldManager: Invalid value: "a\\u0007b": invalid character U+0007 (at position 1)',
    ]);
  });
});
