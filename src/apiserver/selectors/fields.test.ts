import type { KObject } from '../../api/meta.js';
import { ApiError } from '../errors.js';
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

  it('gives other kinds metadata fields and the generic message', () => {
    const sf = selectableFields('', 'ServiceAccount');
    expect(sf.allowed).toEqual(META);
    expect(() => parseFieldSelector('spec.x=1', sf.allowed, sf)).toThrow('"spec.x" is not a known field selector');
  });
});
