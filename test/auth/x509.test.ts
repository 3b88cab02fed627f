import { createHash } from 'node:crypto';
import type { UserInfo } from '../../src/api/meta.js';
import { createRequestAuthenticator } from '../../src/apiserver/authentication/request-authenticator.js';
import { createTokenChain } from '../../src/apiserver/authentication/token-union.js';
import type { AuthenticationRequest } from '../../src/apiserver/authentication/types.js';
import { createX509Authenticator } from '../../src/apiserver/authentication/x509.js';
import { createCa, issueLeaf, type TestCa } from './fixtures.js';

describe('x509 client certificate authenticator', () => {
  let ca: TestCa;
  let other: TestCa;
  beforeAll(async () => {
    ca = await createCa('client-ca');
    other = await createCa('client-ca'); // same name, different key: must not be trusted
  });
  const auth = (): ReturnType<typeof createX509Authenticator> =>
    createX509Authenticator({ clientCaPem: ca.pem, now: () => new Date() });

  it('maps CN to user and every O to groups, with the certificate fingerprint', async () => {
    const der = await issueLeaf(ca, { cn: 'alice', orgs: ['system:masters', 'dev'] });
    const user = auth().authenticate([der]);
    const fp = createHash('sha256').update(der).digest('hex');
    expect(user).toEqual({
      username: 'alice',
      groups: ['system:masters', 'dev'],
      extra: { 'authentication.kubernetes.io/credential-id': [`X509SHA256=${fp}`] },
    });
  });

  it('takes the user UID from its subject attribute (1.34+), and refuses a subject naming two', async () => {
    const der = await issueLeaf(ca, { cn: 'alice', orgs: ['dev'], extraSubject: ['1.3.6.1.4.1.57683.2=alice-uid-1'] });
    expect(auth().authenticate([der])).toMatchObject({ username: 'alice', uid: 'alice-uid-1', groups: ['dev'] });
    const plain = await issueLeaf(ca, { cn: 'alice' });
    expect(auth().authenticate([plain])).not.toHaveProperty('uid');
    const two = await issueLeaf(ca, { cn: 'alice', extraSubject: ['1.3.6.1.4.1.57683.2=a', '1.3.6.1.4.1.57683.2=b'] });
    expect(() => auth().authenticate([two])).toThrow('x509: the certificate subject names more than one user UID');
    // An INTEGER where the UID string belongs: refused (Node's parser already rejects such a subject).
    const notString = await issueLeaf(ca, { cn: 'alice', extraSubject: ['1.3.6.1.4.1.57683.2=#020105'] });
    expect(() => auth().authenticate([notString])).toThrow(/^x509: /);
  });

  it('refuses a certificate from another CA with the same subject', async () => {
    const der = await issueLeaf(other, { cn: 'admin', orgs: ['system:masters'] });
    expect(() => auth().authenticate([der])).toThrow('x509: certificate signed by unknown authority');
  });

  it('refuses a self-signed certificate presented as its own CA', async () => {
    const self = await createCa('admin');
    expect(() => auth().authenticate([new Uint8Array(self.cert.rawData)])).toThrow(/unknown authority/);
  });

  it('refuses expired and not-yet-valid certificates', async () => {
    const now = Date.now();
    const expired = await issueLeaf(ca, { cn: 'bob', notBefore: new Date(now - 7200_000), notAfter: new Date(now - 3600_000) });
    const future = await issueLeaf(ca, { cn: 'bob', notBefore: new Date(now + 3600_000), notAfter: new Date(now + 7200_000) });
    expect(() => auth().authenticate([expired])).toThrow(/expired or is not yet valid/);
    expect(() => auth().authenticate([future])).toThrow(/expired or is not yet valid/);
  });

  it('refuses a serving-only certificate (ExtKeyUsage without clientAuth)', async () => {
    const der = await issueLeaf(ca, { cn: 'system:node:n1', usage: 'server' });
    expect(() => auth().authenticate([der])).toThrow(/incompatible key usage/);
  });

  it('treats an empty CN as not authenticated rather than an error', async () => {
    const der = await issueLeaf(ca, { cn: '' , orgs: ['x'] });
    expect(auth().authenticate([der])).toBeUndefined();
  });

  it('verifies through a presented intermediate CA and refuses it when missing', async () => {
    const intermediate = await createCa('intermediate', ca);
    const der = await issueLeaf(intermediate, { cn: 'carol' });
    expect(auth().authenticate([der, new Uint8Array(intermediate.cert.rawData)])?.username).toBe('carol');
    expect(() => auth().authenticate([der])).toThrow(/unknown authority/);
  });

  it('refuses garbage bytes with an error, not a crash', () => {
    expect(() => auth().authenticate([new Uint8Array([1, 2, 3])])).toThrow('x509: malformed certificate');
  });

  it('reuses the verification of a connection\'s chain only while every certificate is valid', async () => {
    let now = Date.now();
    const cached = createX509Authenticator({ clientCaPem: ca.pem, now: () => new Date(now) });
    const der = await issueLeaf(ca, { cn: 'dave', orgs: ['ops'], notBefore: new Date(now - 60_000), notAfter: new Date(now + 60_000) });
    const chain = [der];
    const first = cached.authenticate(chain);
    // Every request of the chain shares one frozen user: a caller trying to change it is refused,
    // and the cached result stays as it was.
    expect(() => first?.groups.push('system:masters')).toThrow(TypeError);
    expect(cached.authenticate(chain)?.groups).toEqual(['ops']);
    now += 120_000;
    expect(() => cached.authenticate(chain)).toThrow(/expired or is not yet valid/);
  });

  it('remembers a verified chain by its fingerprints across connections, and nothing else', async () => {
    let now = Date.now();
    const remembering = createX509Authenticator({ clientCaPem: ca.pem, now: () => new Date(now) });
    const der = await issueLeaf(ca, { cn: 'erin', orgs: ['ops'], notBefore: new Date(now - 60_000), notAfter: new Date(now + 60_000) });
    expect(remembering.authenticate([der])?.username).toBe('erin');
    // A new connection hands a new array of the same bytes: the same user, and its window still holds.
    expect(remembering.authenticate([new Uint8Array(der)])?.username).toBe('erin');
    const untrusted = await issueLeaf(other, { cn: 'erin', orgs: ['ops'] });
    expect(() => remembering.authenticate([untrusted])).toThrow(/unknown authority/);
    now += 120_000;
    expect(() => remembering.authenticate([new Uint8Array(der)])).toThrow(/expired or is not yet valid/);
  });

  it('hands every request of a certificate one frozen user with system:authenticated: no request can change what the next one is', async () => {
    const der = await issueLeaf(ca, { cn: 'frank', orgs: ['ops'] });
    const requests = createRequestAuthenticator({ x509: auth(), tokens: createTokenChain([], []) });
    // Each request of a new connection hands its own array of the same bytes.
    const request = (): AuthenticationRequest => ({ headers: {}, clientCertificateChain: [new Uint8Array(der)], headersDistinct: {} });
    const first = (await requests.authenticate(request())) as UserInfo;
    const fp = createHash('sha256').update(der).digest('hex');
    const expected = { username: 'frank', groups: ['ops', 'system:authenticated'], extra: { 'authentication.kubernetes.io/credential-id': [`X509SHA256=${fp}`] } };
    expect(first).toEqual(expected);
    const attempts: (() => unknown)[] = [
      () => first.groups.push('system:masters'),
      () => (first.groups[0] = 'system:masters'),
      () => (first.username = 'admin'),
      () => (first.uid = 'admin-uid'),
      () => first.extra?.['authentication.kubernetes.io/credential-id']?.push('X509SHA256=other'),
      () => first.extra && (first.extra['scopes.example'] = ['all']),
      () => (first.extra = {}),
    ];
    for (const attempt of attempts) expect(attempt).toThrow(TypeError);
    const second = await requests.authenticate(request());
    expect(second).toEqual(expected);
    expect(second).toBe(first);
  });
});
