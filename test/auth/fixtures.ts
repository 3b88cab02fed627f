/** Test doubles for the identity tests: an in-memory ObjectReader and real X.509 material. */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { KObject, UserInfo } from '../../src/api/meta.js';
import type { ResourceInfo, ResourceOf } from '../../src/api/resources.js';
import type { RequestContext } from '../../src/apiserver/registry/generic/strategy.js';
import type { Authorizer } from '../../src/apiserver/authorization/authorizer.js';
import type { ObjectReader } from '../../src/apiserver/authentication/types.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

export class MemoryObjects implements ObjectReader {
  private readonly objects = new Map<string, KObject>();
  /** With `readsAtOnce`, it answers readNow too, as a reader over a store served from memory does. */
  readonly readNow?: ObjectReader['readNow'];

  constructor(readsAtOnce = false) {
    if (readsAtOnce) this.readNow = <T extends KObject>(info: ResourceOf<T>, ns: string | undefined, name: string): T | null =>
      (this.objects.get(this.key(info, ns, name)) as T | undefined) ?? null;
  }

  private key(info: ResourceInfo, ns: string | undefined, name: string): string {
    return `${info.group}/${info.plural}/${info.namespaced ? (ns ?? '') : ''}/${name}`;
  }

  put(info: ResourceInfo, obj: KObject): KObject {
    this.objects.set(this.key(info, obj.metadata?.namespace, obj.metadata?.name ?? ''), obj);
    return obj;
  }

  remove(info: ResourceInfo, ns: string | undefined, name: string): void {
    this.objects.delete(this.key(info, ns, name));
  }

  /** Objects are stored as the tests put them, which are of the resource's kind. */
  get<T extends KObject>(info: ResourceOf<T>, ns: string | undefined, name: string): Promise<T | undefined> {
    return Promise.resolve(this.objects.get(this.key(info, ns, name)) as T | undefined);
  }

  list<T extends KObject>(info: ResourceOf<T>, ns: string | undefined): Promise<T[]> {
    const prefix = `${info.group}/${info.plural}/${info.namespaced && ns ? ns + '/' : ''}`;
    return Promise.resolve([...this.objects.entries()].filter(([k]) => k.startsWith(prefix)).map(([, v]) => v as T));
  }
}

export function ctxFor(user: UserInfo, objects: ObjectReader, authorizer: Authorizer, now = new Date()): RequestContext {
  return { user, now, dryRun: false, authorizer, objects, warnings: [] };
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

export interface TestCa {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
  pem: string;
}

async function keyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

export async function createCa(cn = 'test-ca', issuer?: TestCa): Promise<TestCa> {
  const keys = await keyPair();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '01',
    subject: `CN=${cn}`,
    issuer: issuer ? issuer.cert.subject : `CN=${cn}`,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + 86400_000),
    publicKey: keys.publicKey,
    signingKey: issuer ? issuer.keys.privateKey : keys.privateKey,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  return { cert, keys, pem: cert.toString('pem') };
}

export interface LeafOptions {
  cn: string;
  orgs?: string[];
  usage?: 'client' | 'server' | 'none';
  notBefore?: Date;
  notAfter?: Date;
  /** More subject attributes, in @peculiar/x509's string form (`1.3.6.1.4.1.57683.2=uid`). */
  extraSubject?: string[];
}

export async function issueLeaf(ca: TestCa, o: LeafOptions): Promise<Uint8Array> {
  const keys = await keyPair();
  const now = Date.now();
  const subject = [`CN=${o.cn}`, ...(o.orgs ?? []).map((g) => `O=${g}`), ...(o.extraSubject ?? [])].join(', ');
  const usage = o.usage ?? 'client';
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(false)];
  if (usage !== 'none') extensions.push(new x509.ExtendedKeyUsageExtension([usage === 'client' ? CLIENT_AUTH : SERVER_AUTH]));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject,
    issuer: ca.cert.subject,
    notBefore: o.notBefore ?? new Date(now - 60_000),
    notAfter: o.notAfter ?? new Date(now + 3600_000),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALG,
    extensions,
  });
  return new Uint8Array(cert.rawData);
}

/** A leaf certificate and its private key, both PEM, for TLS clients and servers in tests. */
export async function issueLeafPem(ca: TestCa, o: LeafOptions): Promise<{ certPem: string; keyPem: string }> {
  const keys = await keyPair();
  const now = Date.now();
  const subject = [`CN=${o.cn}`, ...(o.orgs ?? []).map((g) => `O=${g}`)].join(', ');
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '03',
    subject,
    issuer: ca.cert.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3600_000),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.ExtendedKeyUsageExtension([o.usage === 'server' ? SERVER_AUTH : CLIENT_AUTH]),
      new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n`;
  return { certPem: cert.toString('pem'), keyPem };
}
