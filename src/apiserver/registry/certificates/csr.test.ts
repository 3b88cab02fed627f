import type { KObject } from '../../../api/meta.js';
import { errors } from '../../http/errors.js';
import { type FieldError, fieldErrorString } from '../../http/field-errors.js';
import { ALICE, b64, cond, csrObject, csrPem, ctx, storedCsr, type CsrFields } from '../../../../test/csr/helpers.js';
import { csrStrategy } from './csr.js';

const strategy = csrStrategy;

let PEM: string;
beforeAll(async () => {
  PEM = await csrPem();
});

const texts = (errs: FieldError[]): string[] => errs.map(fieldErrorString);
const clone = <T>(v: T): T => structuredClone(v);

const stored = (status: Record<string, unknown> = {}, fields: CsrFields = {}): KObject => storedCsr(PEM, status, fields);

describe('create', () => {
  it('overwrites requester identity, resets status and keeps Go field order', () => {
    const obj = csrObject(PEM, {
      expirationSeconds: 3600,
      spec: { username: 'mallory', uid: 'x', groups: ['system:masters'], extra: { a: ['b'] } },
      status: { conditions: [cond('Approved')], certificate: 'AQ==' },
    });
    strategy.prepareForCreate?.(obj, ctx({ user: { ...ALICE, extra: { scopes: ['s1'] } } }));
    expect(Object.keys(obj.spec as object)).toEqual(['request', 'signerName', 'expirationSeconds', 'usages', 'username', 'uid', 'groups', 'extra']);
    expect(obj.spec).toMatchObject({ username: 'alice', uid: 'uid-alice', groups: ['devs', 'system:authenticated'], extra: { scopes: ['s1'] } });
    expect(obj.status).toEqual({});
    expect(strategy.validate?.(obj, ctx())).toEqual([]);
  });

  it('omits identity fields the user lacks', () => {
    const obj = csrObject(PEM, { spec: { username: 'mallory', extra: { a: ['b'] } } });
    strategy.prepareForCreate?.(obj, ctx({ user: { username: 'bob', groups: [] } }));
    expect(obj.spec).not.toHaveProperty('uid');
    expect(obj.spec).not.toHaveProperty('groups');
    expect(obj.spec).not.toHaveProperty('extra');
    expect((obj.spec as { username: string }).username).toBe('bob');
  });

  it('canonicalizes the request base64 as Go re-encodes []byte', () => {
    const wrapped = b64(PEM).replace(/(.{76})/g, '$1\n');
    const obj = csrObject(PEM, { request: wrapped });
    strategy.prepareForCreate?.(obj, ctx());
    expect((obj.spec as { request: string }).request).toBe(b64(PEM));
  });

  it('rejects invalid base64 with the decoder 400', () => {
    const obj = csrObject(PEM, { request: 'LS0t*' });
    expect(() => strategy.prepareForCreate?.(obj, ctx())).toThrow(
      'CertificateSigningRequest in version "v1" cannot be handled as a CertificateSigningRequest: illegal base64 data at input byte 4',
    );
  });

  const validateOne = (fields: Parameters<typeof csrObject>[1], pem = PEM): FieldError[] => {
    const obj = csrObject(pem, fields);
    strategy.prepareForCreate?.(obj, ctx());
    return strategy.validate?.(obj, ctx()) ?? [];
  };

  it.each([
    ['no PEM at all', 'hello'],
    ['a CERTIFICATE block', '-----BEGIN CERTIFICATE-----\nAQID\n-----END CERTIFICATE-----\n'],
  ])('rejects a request with %s', (_what, text) => {
    const errs = validateOne({ request: b64(text) });
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({ type: 'FieldValueInvalid', field: 'spec.request', detail: 'PEM block type must be CERTIFICATE REQUEST' });
    expect(errs[0]?.value).toEqual({ goSyntax: `[]byte{${[...Buffer.from(text)].map((b) => `0x${b.toString(16)}`).join(', ')}}` });
  });

  it('prints a missing request as a nil []byte', () => {
    const errs = validateOne({ request: null });
    expect(errs[0]).toMatchObject({ field: 'spec.request', value: { goSyntax: '[]byte(nil)' } });
  });

  it('rejects unparsable DER and a bad signature with the x509 error text', () => {
    const garbage = validateOne({ request: b64('-----BEGIN CERTIFICATE REQUEST-----\nAQIDBA==\n-----END CERTIFICATE REQUEST-----\n') });
    expect(garbage.map((e) => e.field)).toEqual(['spec.request']);
    expect(garbage[0]?.detail).toMatch(/^(x509|asn1): /);

    const der = Buffer.from(PEM.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    der.writeUInt8((der.at(-5) ?? 0) ^ 0x01, der.length - 5); // inside the ECDSA signature
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    const bad = validateOne({ request: b64(tampered) });
    expect(bad.map((e) => e.field)).toEqual(['spec.request']);
    expect(bad[0]?.detail).toMatch(/^(x509|asn1)/);
  });

  it('requires usages', () => {
    expect(texts(validateOne({ usages: [] }))).toEqual(['spec.usages: Required value']);
    expect(texts(validateOne({ usages: null }))).toEqual(['spec.usages: Required value']);
  });

  it('rejects unknown usages listing the 23 sorted', () => {
    expect(texts(validateOne({ usages: ['client auth', 'bogus'] }))).toEqual([
      'spec.usages[1]: Unsupported value: "bogus": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"',
    ]);
  });

  it('rejects duplicate usages', () => {
    expect(texts(validateOne({ usages: ['client auth', 'signing', 'client auth'] }))).toEqual([
      'spec.usages[2]: Duplicate value: "client auth"',
    ]);
  });

  it('rejects the legacy signer and bad signer names', () => {
    expect(texts(validateOne({ signerName: 'kubernetes.io/legacy-unknown' }))).toEqual([
      'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version',
    ]);
    expect(texts(validateOne({ signerName: '' }))).toEqual(['spec.signerName: Required value']);
    expect(texts(validateOne({ signerName: 'foo' }))[0]).toContain('must be a fully qualified domain and path');
  });

  it('needs expirationSeconds >= 600', () => {
    expect(validateOne({ expirationSeconds: 600 })).toEqual([]);
    for (const n of [599, 0, -5]) {
      expect(texts(validateOne({ expirationSeconds: n }))).toEqual([
        `spec.expirationSeconds: Invalid value: ${n}: may not specify a duration less than 600 seconds (10 minutes)`,
      ]);
    }
  });

  it('accepts usages the signer would refuse (not checked at create)', () => {
    expect(validateOne({ signerName: 'kubernetes.io/kube-apiserver-client', usages: ['digital signature', 'key encipherment'] })).toEqual([]);
  });

  it('reports every error in upstream order, rendered as one 422', () => {
    const errs = validateOne({ request: b64('x'), usages: ['bogus', 'bogus'], signerName: 'foo', expirationSeconds: 1 });
    expect(errs.map((e) => e.field)).toEqual([
      'spec.request',
      'spec.usages[0]',
      'spec.usages[1]',
      'spec.usages[1]',
      'spec.signerName',
      'spec.expirationSeconds',
    ]);
    const e = errors.invalid('CertificateSigningRequest', 'certificates.k8s.io', 'csr-1', errs.slice(4));
    expect(e.code).toBe(422);
    expect(e.message).toBe(
      `CertificateSigningRequest.certificates.k8s.io "csr-1" is invalid: [spec.signerName: Invalid value: "foo": must be a fully qualified domain and path of the form 'example.com/signer-name', spec.expirationSeconds: Invalid value: 1: may not specify a duration less than 600 seconds (10 minutes)]`,
    );
  });

  it('accepts any name and selects on spec.signerName', () => {
    expect(strategy.validateName?.('Not_A:DNS name', false)).toEqual([]);
    expect(strategy.fieldSelectors?.['spec.signerName']?.(stored())).toBe('example.com/my-signer');
    expect(strategy.allowCreateOnUpdate).toBe(false);
    expect(strategy.allowUnconditionalUpdate).toBe(true);
  });
});

describe('update of the main resource', () => {
  it('silently keeps spec and status, applies metadata', () => {
    const old = stored({ conditions: [cond('Approved')] });
    const next = clone(old);
    next.metadata = { ...next.metadata, labels: { a: 'b' } };
    next.spec = { ...(next.spec as object), signerName: 'other.io/x', usages: ['any'], username: 'mallory' };
    next.status = { conditions: [], certificate: b64('x') };
    strategy.prepareForUpdate?.(next, old, ctx());
    expect(next.spec).toEqual(old.spec);
    expect(next.status).toEqual(old.status);
    expect(next.metadata?.labels).toEqual({ a: 'b' });
    expect(strategy.validateUpdate?.(next, old, ctx())).toEqual([]);
  });

  it('would refuse certificate and approval changes if they reached validation', () => {
    const old = stored();
    const next = clone(old);
    next.status = { conditions: [cond('Approved')], certificate: b64('x') };
    expect(texts(strategy.validateUpdate?.(next, old, ctx()) ?? [])).toEqual([
      'status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block',
      'status.conditions: Forbidden: updates may not add a condition of type "Approved"',
      'status.certificate: Forbidden: updates may not set certificate content',
    ]);
  });
});
