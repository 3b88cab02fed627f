/**
 * CSR create validation cases ported as data from kubernetes
 * pkg/apis/certificates/validation/validation_test.go (TestValidateCertificateSigningRequestCreate), run on real
 * PKCS#10 requests. Each row lists the expected errors as (type, field, detail); values are left out where
 * upstream's are Go byte slices.
 */
import type { KObject } from '../../src/api/meta.js';
import { fieldErrorString } from '../../src/apiserver/http/field-errors.js';
import { validateCsr, validateCsrUpdate } from '../../src/apiserver/registry/certificates/validation.js';
import { b64, certificatePem, csrPem } from '../csr/helpers.js';

const a = (n: number): string => 'a'.repeat(n);
const maxLengthFQDN = `${a(63)}.${a(63)}.${a(63)}.${a(61)}`;
const maxLengthSignerName = `${maxLengthFQDN}/${a(63)}.${a(253)}`;
const LABEL_MSG = (label: string): string =>
  `validating label "${label}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
const FORM = "must be a fully qualified domain and path of the form 'example.com/signer-name'";
const DURATION = 'may not specify a duration less than 600 seconds (10 minutes)';
const USAGES = [
  'any', 'cert sign', 'client auth', 'code signing', 'content commitment', 'crl sign', 'data encipherment', 'decipher only',
  'digital signature', 'email protection', 'encipher only', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'key agreement',
  'key encipherment', 'microsoft sgc', 'netscape sgc', 'ocsp signing', 's/mime', 'server auth', 'signing', 'timestamping',
];

type Err = [type: string, field: string, detail: string];
interface Spec {
  request?: 'valid' | string | null;
  signerName?: string;
  usages?: string[] | null;
  expirationSeconds?: number;
}

const pem = await csrPem({ commonName: '', organizations: ['testing-org'] });
const cert = await certificatePem();

function csr(spec: Spec): KObject {
  const out: Record<string, unknown> = {};
  if (spec.request === 'valid' || spec.request === undefined) out.request = b64(pem);
  else if (spec.request !== null) out.request = b64(spec.request);
  if (spec.signerName !== undefined) out.signerName = spec.signerName;
  if (spec.usages !== null) out.usages = spec.usages ?? ['key encipherment'];
  if (spec.expirationSeconds !== undefined) out.expirationSeconds = spec.expirationSeconds;
  return { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'testcsr' }, spec: out };
}

const valid = 'example.com/valid-name';
it.each<[string, Spec, Err[]]>([
  ['CSR with empty request data should fail', { request: null, signerName: valid }, [['FieldValueInvalid', 'spec.request', 'PEM block type must be CERTIFICATE REQUEST']]],
  ['CSR with invalid request data should fail', { request: 'invalid data', signerName: valid }, [['FieldValueInvalid', 'spec.request', 'PEM block type must be CERTIFICATE REQUEST']]],
  ['CSR with no usages should fail', { signerName: valid, usages: null }, [['FieldValueRequired', 'spec.usages', '']]],
  ['CSR with no signerName set should fail', {}, [['FieldValueRequired', 'spec.signerName', '']]],
  ["signerName contains no '/'", { signerName: 'an-invalid-signer-name' }, [['FieldValueInvalid', 'spec.signerName', FORM]]],
  ["signerName contains two '/'", { signerName: 'an-invalid-signer-name.com/something/else' }, [['FieldValueInvalid', 'spec.signerName', FORM]]],
  [
    'signerName domain component is not fully qualified',
    { signerName: 'example/some-signer-name' },
    [['FieldValueInvalid', 'spec.signerName', 'should be a domain with at least two segments separated by dots']],
  ],
  ['signerName path component is empty', { signerName: 'example.com/' }, [['FieldValueInvalid', 'spec.signerName', LABEL_MSG('')]]],
  ['signerName path component ends with a symbol', { signerName: 'example.com/something-' }, [['FieldValueInvalid', 'spec.signerName', LABEL_MSG('something-')]]],
  ['signerName path component is a symbol', { signerName: 'example.com/-' }, [['FieldValueInvalid', 'spec.signerName', LABEL_MSG('-')]]],
  ["signerName path component contains no '.' but is valid", { signerName: 'example.com/some-signer-name' }, []],
  [
    'signerName with a total length greater than 571 characters should be rejected',
    { signerName: `${maxLengthSignerName}.toolong` },
    [['FieldValueTooLong', 'spec.signerName', `may not be more than ${maxLengthSignerName.length} bytes`]],
  ],
  [
    'signerName with a fqdn greater than 253 characters should be rejected',
    { signerName: `${maxLengthFQDN}.extra/valid-path` },
    [['FieldValueTooLong', 'spec.signerName', `may not be more than ${maxLengthFQDN.length} bytes`]],
  ],
  ['signerName can have a longer path if the domain component is less than the max length', { signerName: `abc.io/${a(253)}.${a(253)}` }, []],
  [
    'signerName with a domain label greater than 63 characters will fail',
    { signerName: `${a(66)}.example.io/valid-path` },
    [['FieldValueInvalid', 'spec.signerName', `validating label "${a(66)}": must be no more than 63 characters`]],
  ],
  ['signerName of max length in format <fully-qualified-domain-name>/<resource-namespace>.<resource-name> is valid', { signerName: maxLengthSignerName }, []],
  ['negative duration', { signerName: valid, expirationSeconds: -1 }, [['FieldValueInvalid', 'spec.expirationSeconds', DURATION]]],
  ['zero duration', { signerName: valid, expirationSeconds: 0 }, [['FieldValueInvalid', 'spec.expirationSeconds', DURATION]]],
  ['one duration', { signerName: valid, expirationSeconds: 1 }, [['FieldValueInvalid', 'spec.expirationSeconds', DURATION]]],
  ['too short duration', { signerName: valid, expirationSeconds: 60 }, [['FieldValueInvalid', 'spec.expirationSeconds', DURATION]]],
  ['valid duration', { signerName: valid, expirationSeconds: 600 }, []],
  ['missing usages', { signerName: valid, usages: [] }, [['FieldValueRequired', 'spec.usages', '']]],
  [
    'unknown and duplicate usages',
    { signerName: valid, usages: ['unknown', 'unknown'] },
    [
      ['FieldValueNotSupported', 'spec.usages[0]', USAGES.map((u) => JSON.stringify(u)).join(', ')],
      ['FieldValueNotSupported', 'spec.usages[1]', USAGES.map((u) => JSON.stringify(u)).join(', ')],
      ['FieldValueDuplicate', 'spec.usages[1]', ''],
    ],
  ],
])('%s', (_name, spec, want) => {
  const got = validateCsr(csr(spec)).map((e): Err => [e.type, e.field, e.detail]);
  // NotSupported details list the allowed values; compare their set rather than the wording around it.
  const normal = (errs: Err[]): Err[] =>
    errs.map(([t, f, d]): Err => [t, f, t === 'FieldValueNotSupported' ? USAGES.filter((u) => d.includes(JSON.stringify(u))).join(',') : d]);
  expect(normal(got)).toEqual(normal(want));
});

/**
 * TestValidateCertificateSigningRequestUpdate, ...StatusUpdate and ...ApprovalUpdate: the same transitions through
 * the main resource, /status (may set a certificate) and /approval (may add Approved/Denied). Errors as text.
 */
describe('update, status and approval transitions', () => {
  const noPem = 'invalid data';
  const nonCertificatePem = '-----BEGIN CERTIFICATE1-----\nAAAA\n-----END CERTIFICATE1-----\n';
  const condition = (type: string) => [{ type, status: 'True' }];
  const stored = (status: { conditions?: string; certificate?: string } = {}, finalizers = false): KObject => {
    const obj = csr({ signerName: 'example.com/something' });
    obj.metadata = { name: 'testcsr', resourceVersion: '1', ...(finalizers ? { finalizers: ['foo'] } : {}) };
    const s: Record<string, unknown> = {};
    if (status.conditions) s.conditions = condition(status.conditions);
    if (status.certificate !== undefined) s.certificate = b64(status.certificate === 'valid' ? cert : status.certificate);
    if (Object.keys(s).length) obj.status = s;
    return obj;
  };
  // Only /approval may add Approved or Denied; Failed may be added through any of the three.
  const addRemove = (type: string, approval: boolean) => {
    const mayAdd = type === 'Failed' || approval;
    return [
      [`add ${type} condition`, stored({ conditions: type }), stored({}, true), mayAdd ? [] : [`status.conditions: Forbidden: updates may not add a condition of type "${type}"`]],
      [`remove ${type} condition`, stored(), stored({ conditions: type }, true), [`status.conditions: Forbidden: updates may not remove a condition of type "${type}"`]],
    ] as Array<[string, KObject, KObject, string[]]>;
  };
  const common = (approval: boolean): Array<[string, KObject, KObject, string[]]> => [
    ['no-op', stored(), stored(), []],
    ['finalizer change with invalid status', stored({ certificate: noPem }), stored({ certificate: noPem }, true), []],
    ...addRemove('Approved', approval),
    ...addRemove('Denied', approval),
    ...addRemove('Failed', approval),
  ];
  const run = (mode: { approvalConditions: boolean; certificate: boolean }) => (_name: string, next: KObject, old: KObject, want: string[]) => {
    expect(validateCsrUpdate(next, old, mode).map(fieldErrorString).sort()).toEqual([...want].sort());
  };

  describe('TestValidateCertificateSigningRequestUpdate', () => {
    it.each<[string, KObject, KObject, string[]]>([
      ...common(false),
      ['set certificate', stored({ certificate: 'valid' }), stored({}, true), ['status.certificate: Forbidden: updates may not set certificate content']],
    ])('%s', run({ approvalConditions: false, certificate: false }));
  });

  describe('TestValidateCertificateSigningRequestStatusUpdate', () => {
    it.each<[string, KObject, KObject, string[]]>([
      ...common(false),
      ['set valid certificate', stored({ certificate: 'valid' }), stored({}, true), []],
      [
        'set invalid certificate',
        stored({ certificate: noPem }),
        stored({}, true),
        ['status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block'],
      ],
      [
        'reset certificate',
        stored({ certificate: nonCertificatePem }),
        stored({ certificate: noPem }, true),
        ['status.certificate: Forbidden: updates may not modify existing certificate content'],
      ],
    ])('%s', run({ approvalConditions: false, certificate: true }));
  });

  describe('TestValidateCertificateSigningRequestApprovalUpdate', () => {
    it.each<[string, KObject, KObject, string[]]>([
      ...common(true),
      ['set certificate', stored({ certificate: 'valid' }), stored({}, true), ['status.certificate: Forbidden: updates may not set certificate content']],
    ])('%s', run({ approvalConditions: true, certificate: false }));
  });
});
