/**
 * ObjectMeta validation cases ported as data from kubernetes
 * staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta_test.go (TestValidateObjectMetaNamespaces,
 * TestValidateObjectMetaOwnerReferences, TestValidateFinalizersUpdate, TestValidateFinalizersPreventConflictingFinalizers,
 * TestValidateObjectMetaUpdatePreventsDeletionFieldMutation, TestObjectMetaGenerationUpdate,
 * TestValidateObjectMetaTrimsTrailingDash, TestValidateAnnotations). Upstream's `field.` paths are `metadata.` here.
 * Three messages are kube-apiserver 1.32's, the level this server reports, where the file (from a later release)
 * has newer wording: an ownerReference apiVersion without a version ("version must not be empty", later "must be
 * <group>/<version> or <version>") and an annotation key with two slashes ("a qualified name ...", later "a valid
 * label key ...").
 */
import type { ObjectMeta, OwnerReference } from '../../src/api/meta.js';
import { fieldErrorString } from '../../src/apiserver/http/field-errors.js';
import { validateSubdomainName } from '../../src/apiserver/validation/names.js';
import {
  TOTAL_ANNOTATION_SIZE_LIMIT,
  validateAnnotations,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '../../src/apiserver/validation/object-meta.js';

const create = (meta: ObjectMeta, namespaced = true): string[] =>
  validateObjectMeta(meta, { namespaced, nameValidator: validateSubdomainName }).map(fieldErrorString);
const update = (next: ObjectMeta, old: ObjectMeta): string[] => validateObjectMetaUpdate(next, old).map(fieldErrorString);

describe('TestValidateObjectMetaNamespaces', () => {
  it('a namespace must be a DNS label', () => {
    const errs = create({ name: 'test', namespace: 'foo.bar' });
    expect(errs).toHaveLength(1);
    expect(errs[0]).toContain('Invalid value: "foo.bar"');
  });
  it('a 64-character namespace breaks two rules', () => {
    const errs = create({ name: 'test', namespace: `A${'b'.repeat(63)}` });
    expect(errs).toHaveLength(2);
    for (const e of errs) expect(e).toContain('Invalid value');
  });
});

describe('TestValidateObjectMetaOwnerReferences', () => {
  const ref = (apiVersion: string, kind: string, uid: string, controller?: boolean): OwnerReference => ({
    apiVersion,
    kind,
    name: 'name',
    uid,
    ...(controller === undefined ? {} : { controller }),
  });
  const cr = 'customresourceVersion';
  it.each<[string, OwnerReference[], string | undefined]>([
    ['simple success - third party extension.', [ref(cr, 'customresourceKind', '1')], undefined],
    ["simple failures - event shouldn't be set as an owner", [ref('v1', 'Event', '1')], 'is disallowed from being an owner'],
    ['simple failures - invalid apiVersion with too many slashes', [ref('a/b/c', 'Pod', '1')], 'apiVersion: Invalid value: "a/b/c": version must not be empty'],
    ['simple failures - invalid apiVersion with empty version', [ref('foo/', 'Pod', '1')], 'apiVersion: Invalid value: "foo/": version must not be empty'],
    ['simple success - apiVersion with no slashes (legacy core group)', [ref('v1', 'Pod', '1')], undefined],
    [
      'simple controller ref success - one reference with Controller set',
      [ref(cr, 'customresourceKind', '1', false), ref(cr, 'customresourceKind', '2', true), ref(cr, 'customresourceKind', '3', false), ref(cr, 'customresourceKind', '4')],
      undefined,
    ],
    [
      'simple controller ref failure - two references with Controller set',
      [ref(cr, 'customresourceKind1', '1', false), ref(cr, 'customresourceKind2', '2', true), ref(cr, 'customresourceKind3', '3', true), ref(cr, 'customresourceKind4', '4')],
      'Only one reference can have Controller set to true. Found "true" in references for customresourceKind2/name and customresourceKind3/name',
    ],
  ])('%s', (_name, ownerReferences, message) => {
    const errs = create({ name: 'test', namespace: 'test', ownerReferences });
    if (message === undefined) expect(errs).toEqual([]);
    else expect(errs[0]).toContain(message);
  });
});

describe('TestValidateFinalizersUpdate', () => {
  const deleting = { name: 'test', resourceVersion: '1', deletionTimestamp: '1970-01-01T00:00:00Z' };
  it.each<[string, ObjectMeta, ObjectMeta, string | undefined]>([
    ['invalid adding finalizers', { ...deleting, finalizers: ['x/a'] }, { ...deleting, finalizers: ['x/a', 'y/b'] }, 'y/b'],
    ['invalid changing finalizers', { ...deleting, finalizers: ['x/a'] }, { ...deleting, finalizers: ['x/b'] }, 'x/b'],
    ['valid removing finalizers', { ...deleting, finalizers: ['x/a', 'y/b'] }, { ...deleting, finalizers: ['x/a'] }, undefined],
    [
      'valid adding finalizers for objects not being deleted',
      { name: 'test', resourceVersion: '1', finalizers: ['x/a'] },
      { name: 'test', resourceVersion: '1', finalizers: ['x/a', 'y/b'] },
      undefined,
    ],
  ])('%s', (_name, old, next, expected) => {
    const errs = update(next, old);
    if (expected === undefined) expect(errs).toEqual([]);
    else expect(errs.join('\n')).toContain(expected);
  });
});

it('TestValidateFinalizersPreventConflictingFinalizers', () => {
  const errs = create({ name: 'test', resourceVersion: '1', finalizers: ['orphan', 'foregroundDeletion'] }, false);
  expect(errs.join('\n')).toContain('cannot be both set');
});

describe('TestValidateObjectMetaUpdatePreventsDeletionFieldMutation', () => {
  const now = '1970-01-01T00:16:40Z';
  const later = '1970-01-01T00:33:20Z';
  const base = { name: 'test', resourceVersion: '1' };
  it.each<[string, ObjectMeta, ObjectMeta, string[]]>([
    ['valid without deletion fields', base, base, []],
    ['valid with deletion fields', { ...base, deletionTimestamp: now, deletionGracePeriodSeconds: 30 }, { ...base, deletionTimestamp: now, deletionGracePeriodSeconds: 30 }, []],
    ['invalid set deletionTimestamp', base, { ...base, deletionTimestamp: now }, [`metadata.deletionTimestamp: Invalid value: "${now}": field is immutable`]],
    ['invalid clear deletionTimestamp', { ...base, deletionTimestamp: now }, base, ['metadata.deletionTimestamp: Invalid value: null: field is immutable']],
    ['invalid change deletionTimestamp', { ...base, deletionTimestamp: now }, { ...base, deletionTimestamp: later }, [`metadata.deletionTimestamp: Invalid value: "${later}": field is immutable`]],
    ['invalid set deletionGracePeriodSeconds', base, { ...base, deletionGracePeriodSeconds: 30 }, ['metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable']],
    ['invalid clear deletionGracePeriodSeconds', { ...base, deletionGracePeriodSeconds: 30 }, base, ['metadata.deletionGracePeriodSeconds: Invalid value: null: field is immutable']],
    ['invalid change deletionGracePeriodSeconds', { ...base, deletionGracePeriodSeconds: 30 }, { ...base, deletionGracePeriodSeconds: 40 }, ['metadata.deletionGracePeriodSeconds: Invalid value: 40: field is immutable']],
  ])('%s', (_name, old, next, expected) => {
    expect(update(next, old)).toEqual(expected);
  });
});

describe('TestObjectMetaGenerationUpdate', () => {
  const m = (generation: number): ObjectMeta => ({ name: 'test', resourceVersion: '1', generation });
  it.each<[string, number, number, string[]]>([
    ['invalid generation change - decremented', 5, 4, ['metadata.generation: Invalid value: 4: must not be decremented']],
    ['valid generation change - incremented by one', 1, 2, []],
    ['valid generation field - not updated', 5, 5, []],
  ])('%s', (_name, old, next, expected) => {
    expect(update(m(next), m(old))).toEqual(expected);
  });
});

it('TestValidateObjectMetaTrimsTrailingDash', () => {
  expect(create({ name: 'test', generateName: 'foo-' }, false)).toEqual([]);
});

describe('TestValidateAnnotations', () => {
  const limit = TOTAL_ANNOTATION_SIZE_LIMIT;
  it.each<Record<string, string>>([
    { simple: 'bar' },
    { 'now-with-dashes': 'bar' },
    { '1-starts-with-num': 'bar' },
    { '1234': 'bar' },
    { 'simple/simple': 'bar' },
    { 'now-with-dashes/simple': 'bar' },
    { 'now-with-dashes/now-with-dashes': 'bar' },
    { 'now.with.dots/simple': 'bar' },
    { 'now-with.dashes-and.dots/simple': 'bar' },
    { '1-num.2-num/3-num': 'bar' },
    { '1234/5678': 'bar' },
    { '1.2.3.4/5678': 'bar' },
    { UpperCase123: 'bar' },
    { a: 'b'.repeat(limit - 1) },
    { a: 'b'.repeat(limit / 2 - 1), c: 'd'.repeat(limit / 2 - 1) },
  ])('%# is valid', (annotations) => {
    expect(validateAnnotations(annotations, 'metadata.annotations')).toEqual([]);
  });
  it.each<[Record<string, string>, string]>([
    [{ 'nospecialchars^=@': 'bar' }, 'name part must consist of'],
    [{ 'cantendwithadash-': 'bar' }, 'name part must consist of'],
    [{ 'only/one/slash': 'bar' }, 'a qualified name must consist of'],
    [{ ['a'.repeat(254)]: 'bar' }, 'must be no more than'],
  ])('%# key error: %s', (annotations, detail) => {
    const errs = validateAnnotations(annotations, 'metadata.annotations');
    expect(errs).toHaveLength(1);
    expect(errs[0]?.detail).toContain(detail);
  });
  it.each<Record<string, string>>([{ a: 'b'.repeat(limit) }, { a: 'b'.repeat(limit / 2), c: 'd'.repeat(limit / 2) }])('%# is over the total size', (annotations) => {
    expect(validateAnnotations(annotations, 'metadata.annotations')).toHaveLength(1);
  });
});
