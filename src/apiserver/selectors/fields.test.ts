import type { KObject } from '../../api/meta.js';
import { ApiError } from '../http/errors.js';
import { escapeValue, objectFields, parseFieldSelector } from './fields.js';
import { selectableFields } from './selectable-fields.js';

const META = ['metadata.name', 'metadata.namespace'];

function parseError(text: string, allowed = META, style?: 'custom' | 'generic'): ApiError {
  try {
    parseFieldSelector(text, allowed, style ? { unknownFieldStyle: style } : {});
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error(`selector ${JSON.stringify(text)} parsed`);
}

describe('parseFieldSelector matching', () => {
  const fields = { 'metadata.name': 'a,b=c', 'metadata.namespace': 'ns' };
  it.each<[string, boolean]>([
    ['', true],
    ['metadata.namespace=ns', true],
    ['metadata.namespace==ns', true],
    ['metadata.namespace!=ns', false],
    ['metadata.namespace=other', false],
    ['metadata.name=a\\,b\\=c', true],
    ['metadata.name=a\\,b\\=c,metadata.namespace=ns', true],
    ['metadata.name=a\\,b\\=c,metadata.namespace!=ns', false],
    ['metadata.name!=x,', true],
  ])('%j is %s', (sel, want) => {
    expect(parseFieldSelector(sel, META).matches(fields)).toBe(want);
  });

  it('reads a missing field as empty', () => {
    expect(parseFieldSelector('metadata.namespace=', META).matches({ 'metadata.name': 'x' })).toBe(true);
    expect(parseFieldSelector('metadata.namespace!=', META).matches({ 'metadata.name': 'x' })).toBe(false);
  });

  it('exposes exact-match requirements', () => {
    const s = parseFieldSelector('metadata.name=x,metadata.namespace!=y', META);
    expect(s.requiresExactMatch('metadata.name')).toBe('x');
    expect(s.requiresExactMatch('metadata.namespace')).toBeUndefined();
    expect(escapeValue('a,b=c\\')).toBe('a\\,b\\=c\\\\');
  });
});

describe('parseFieldSelector errors', () => {
  it.each<[string, string]>([
    ['metadata.name', "invalid selector: 'metadata.name'; can't understand 'metadata.name'"],
    ['a=b,foo', "invalid selector: 'a=b,foo'; can't understand 'foo'"],
    ['metadata.name=a=b', 'invalid field selector: unescaped character in value: 61'],
    ['metadata.name=a\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['metadata.name=a\\', 'invalid field selector: invalid escape sequence: \\'],
    ['spec.foo=x', 'field label not supported: spec.foo'],
  ])('%j', (sel, message) => {
    const err = parseError(sel);
    expect(err.code).toBe(400);
    expect(err.reason).toBe('BadRequest');
    expect(err.message).toBe(message);
  });

  it('uses the generic meta conversion message when asked', () => {
    expect(parseError('spec.foo=x', META, 'generic').message).toBe(
      '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
  });

  it('checks terms in upstream sorted order', () => {
    expect(parseError('z.b=1,a.b=2').message).toBe('field label not supported: a.b');
  });
});

describe('objectFields and selectableFields', () => {
  const pod: KObject = {
    metadata: { name: 'p', namespace: 'ns' },
    spec: { nodeName: 'n1', serviceAccountName: 'sa' },
    status: { phase: 'Running', podIPs: [{ ip: '10.0.0.1' }] },
  };

  it('produces metadata and per-kind fields', () => {
    const sf = selectableFields('', 'Pod');
    const fields = objectFields(pod, sf.extra, true);
    expect(fields).toMatchObject({
      'metadata.name': 'p',
      'metadata.namespace': 'ns',
      'spec.nodeName': 'n1',
      'spec.hostNetwork': 'false',
      'status.phase': 'Running',
      'status.podIP': '10.0.0.1',
    });
    const sel = parseFieldSelector('spec.nodeName=n1,status.phase!=Pending', sf.allowed, sf);
    expect(sel.matches(fields)).toBe(true);
  });

  it('omits metadata.namespace on cluster kinds, and CSR supports spec.signerName', () => {
    const csr: KObject = { metadata: { name: 'c' }, spec: { signerName: 'kubernetes.io/kubelet-serving' } };
    const sf = selectableFields('certificates.k8s.io', 'CertificateSigningRequest');
    const fields = objectFields(csr, sf.extra, false);
    expect(fields).toEqual({ 'metadata.name': 'c', 'spec.signerName': 'kubernetes.io/kubelet-serving' });
    expect(parseFieldSelector('spec.signerName=kubernetes.io/kubelet-serving', sf.allowed, sf).matches(fields)).toBe(true);
    expect(() => parseFieldSelector('spec.username=x', sf.allowed, sf)).toThrow('field label not supported: spec.username');
  });

  // Rows from pkg/apis/events/v1/conversion.go (AddFieldLabelConversionsForEvent) and
  // pkg/registry/core/event/strategy.go (ToSelectableFields: source falls back to reportingController).
  const regarding = { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u1', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec' };
  const v1Event: KObject = { metadata: { name: 'e', namespace: 'ns' }, regarding, reason: 'Pulled', type: 'Normal', reportingController: 'kubelet' };
  it.each<[string, boolean]>([
    ['regarding.kind=Pod,regarding.name=p,regarding.namespace=ns', true],
    ['regarding.uid=u1,regarding.apiVersion=v1,regarding.resourceVersion=7,regarding.fieldPath=spec', true],
    ['reason=Pulled,type=Normal', true],
    ['reportingController=kubelet', true],
    ['source=kubelet', true],
    ['regarding.name=q', false],
    ['type!=Normal', false],
  ])('events.k8s.io/v1 Event fields: %s matches: %s', (selector, want) => {
    const sf = selectableFields('events.k8s.io', 'Event');
    expect(parseFieldSelector(selector, sf.allowed, sf).matches(objectFields(v1Event, sf.extra, true))).toBe(want);
  });

  it.each(['involvedObject.name=p', 'reportingComponent=kubelet', 'note=x'])('events.k8s.io/v1 refuses %s as upstream', (selector) => {
    const sf = selectableFields('events.k8s.io', 'Event');
    expect(() => parseFieldSelector(selector, sf.allowed, sf)).toThrow(`field label not supported: ${selector.split('=')[0] ?? ''}`);
  });

  // core/v1 spells upstream's ReportingController `reportingComponent`.
  it("selects a core Event's source by source.component, else its reportingComponent", () => {
    const sf = selectableFields('', 'Event');
    const fromComponent = objectFields({ metadata: { name: 'a' }, source: { component: 'kubelet' }, reportingComponent: 'x' }, sf.extra, true);
    const fromController = objectFields({ metadata: { name: 'b' }, reportingComponent: 'example.com/ctl' }, sf.extra, true);
    expect([fromComponent.source, fromController.source]).toEqual(['kubelet', 'example.com/ctl']);
  });

  it('gives other kinds metadata fields and the generic message', () => {
    const sf = selectableFields('', 'ServiceAccount');
    expect(sf.allowed).toEqual(META);
    expect(() => parseFieldSelector('spec.x=1', sf.allowed, sf)).toThrow('"spec.x" is not a known field selector');
  });
});
