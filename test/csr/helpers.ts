/**
 * Test builders for CSR tests: real PKCS#10 requests and certificates from src/pki, CSR objects in
 * their JSON form, and request contexts whose authorizer grants an explicit list of permissions.
 */
import 'reflect-metadata';
import type { KObject, UserInfo } from '../../src/api/meta.js';
import { csrStrategy } from '../../src/apiserver/registry/certificates/csr.js';
import type { RequestContext, SubresourceStrategy } from '../../src/apiserver/registry/generic/strategy.js';
import type { AuthorizationAttributes, Authorizer } from '../../src/apiserver/authorization/authorizer.js';
import { createCertificateAuthority, type CaMaterial } from '../../src/pki/ca.js';
import { createCertificateRequestPem, type CreateCsrOptions } from '../../src/pki/csr.js';
import { issueCertificate } from '../../src/pki/issue.js';
import { generateKeyPair } from '../../src/pki/keys.js';

export const b64 = (text: string): string => Buffer.from(text, 'latin1').toString('base64');

export async function csrPem(opts: Partial<CreateCsrOptions> = {}): Promise<string> {
  const { privateKeyPem } = generateKeyPair('ECDSA-P256');
  return createCertificateRequestPem({ privateKeyPem, commonName: 'system:node:worker-1', ...opts });
}

let ca: Promise<CaMaterial> | undefined;
/** One test CA per test file, created on first use. */
export function testCa(): Promise<CaMaterial> {
  ca ??= createCertificateAuthority({ commonName: 'csr-test-ca' });
  return ca;
}

/** A real certificate (PEM) issued by the test CA for a fresh key. */
export async function certificatePem(commonName = 'issued'): Promise<string> {
  const { publicKeyPem } = generateKeyPair('ECDSA-P256');
  const now = new Date();
  return issueCertificate(await testCa(), {
    subject: { commonName },
    publicKeyPem,
    usages: ['digital signature', 'client auth'],
    notBefore: now,
    notAfter: new Date(now.getTime() + 3600_000),
  });
}

export interface CsrFields {
  name?: string;
  request?: unknown;
  signerName?: unknown;
  usages?: unknown;
  expirationSeconds?: unknown;
  status?: Record<string, unknown>;
  spec?: Record<string, unknown>;
}

/** A CSR in its JSON form; `request` is PEM text (base64-encoded here) unless given as a non-string. */
export function csrObject(pem: string, fields: CsrFields = {}): KObject {
  const spec: Record<string, unknown> = {
    request: fields.request === undefined ? b64(pem) : fields.request,
    signerName: fields.signerName === undefined ? 'example.com/my-signer' : fields.signerName,
    usages: fields.usages === undefined ? ['digital signature', 'client auth'] : fields.usages,
    ...fields.spec,
  };
  if (fields.expirationSeconds !== undefined) spec.expirationSeconds = fields.expirationSeconds;
  const obj: KObject = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: fields.name ?? 'csr-1' },
    spec,
  };
  if (fields.status) obj.status = fields.status;
  return obj;
}

export const ALICE: UserInfo = { username: 'alice', uid: 'uid-alice', groups: ['devs', 'system:authenticated'] };

export interface RecordingAuthorizer extends Authorizer {
  calls: AuthorizationAttributes[];
}

/** Allows exactly the `verb name` pairs given (e.g. `approve example.com/*`) on certificates.k8s.io signers. */
export function signerAuthorizer(grants: string[], fail = false): RecordingAuthorizer {
  const calls: AuthorizationAttributes[] = [];
  return {
    calls,
    async authorize(attrs) {
      calls.push(attrs);
      if (fail) throw new Error('authorizer unavailable');
      const ok = attrs.apiGroup === 'certificates.k8s.io' && attrs.resource === 'signers';
      return { allowed: ok && grants.includes(`${attrs.verb} ${attrs.name ?? ''}`) };
    },
  };
}

export function ctx(opts: { user?: UserInfo; grants?: string[]; now?: Date; authorizer?: Authorizer } = {}): RequestContext {
  return {
    user: opts.user ?? ALICE,
    now: opts.now ?? new Date('2024-05-01T10:00:00.250Z'),
    dryRun: false,
    authorizer: opts.authorizer ?? signerAuthorizer(opts.grants ?? []),
    objects: {
      get: async () => undefined,
      list: async () => [],
    },
    warnings: [],
  };
}

/** A stored CSR as create leaves it (prepared by the strategy), with the given status. */
export function storedCsr(pem: string, status: Record<string, unknown> = {}, fields: CsrFields = {}): KObject {
  const obj = csrObject(pem, fields);
  csrStrategy.prepareForCreate?.(obj, ctx());
  obj.metadata = { name: 'csr-1', uid: 'u1', resourceVersion: '5', creationTimestamp: '2024-05-01T09:00:00Z' };
  obj.status = structuredClone(status);
  return obj;
}

/** A condition with every field and fixed timestamps; `extra` overrides. */
export const cond = (type: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type,
  status: 'True',
  reason: 'R',
  message: 'm',
  lastUpdateTime: '2024-04-01T00:00:00Z',
  lastTransitionTime: '2024-04-01T00:00:00Z',
  ...extra,
});

export function csrSubresource(name: 'approval' | 'status'): SubresourceStrategy {
  const found = csrStrategy.subresources?.[name];
  if (!found) throw new Error(`csr subresource ${name} missing`);
  return found;
}
