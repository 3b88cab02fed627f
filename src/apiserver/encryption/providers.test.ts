/**
 * The local providers' on-disk forms, opened here by hand from upstream's documented layout (not
 * by the provider under test), and the NaCl secretbox test vector (the "firstkey" vector of
 * Bernstein's "Cryptography in NaCl", also in Go's secretbox tests).
 */
import { createDecipheriv } from 'node:crypto';
import { identityProvider, keyedProvider } from './providers.js';

const key16 = Buffer.alloc(16, 7);
const key32 = Buffer.alloc(32, 9);
const plain = Buffer.from('{"kind":"Secret","data":{"password":"aHVudGVyMg=="}}');
const ad = '/registry/secrets/default/s1';

describe('providers', () => {
  it('aescbc stores k8s:enc:aescbc:v1:<key>: + 16-byte IV + CBC with PKCS#7', () => {
    const sealed = Buffer.from(keyedProvider('aescbc', [{ name: 'k1', secret: key16 }]).seal(plain, ad));
    const prefix = 'k8s:enc:aescbc:v1:k1:';
    expect(sealed.subarray(0, prefix.length).toString()).toBe(prefix);
    const body = sealed.subarray(prefix.length);
    expect((body.length - 16) % 16).toBe(0);
    const d = createDecipheriv('aes-128-cbc', key16, body.subarray(0, 16));
    expect(Buffer.concat([d.update(body.subarray(16)), d.final()])).toEqual(plain);
  });

  it('aesgcm stores k8s:enc:aesgcm:v1:<key>: + 12-byte nonce + GCM with the storage key as additional data', () => {
    const provider = keyedProvider('aesgcm', [{ name: 'k1', secret: key32 }]);
    const sealed = Buffer.from(provider.seal(plain, ad));
    const body = sealed.subarray('k8s:enc:aesgcm:v1:k1:'.length);
    const d = createDecipheriv('aes-256-gcm', key32, body.subarray(0, 12));
    d.setAAD(Buffer.from(ad));
    d.setAuthTag(body.subarray(body.length - 16));
    expect(Buffer.concat([d.update(body.subarray(12, body.length - 16)), d.final()])).toEqual(plain);
    // Copied under another key, the value does not decrypt.
    expect(() => provider.open(sealed, '/registry/secrets/default/other')).toThrow();
  });

  it('secretbox is NaCl secretbox after a 24-byte nonce (the NaCl test vector)', () => {
    const firstkey = Buffer.from('1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389', 'hex');
    const nonce = Buffer.from('69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37', 'hex');
    const message = Buffer.from(
      'be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a1ac728d45e6c61296cdc3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057e2f6556ad6b1318a024a838f21af1fde048977eb48f59ffd4924ca1c60902e52f0a089bc76897040e082f937763848645e0705',
      'hex',
    );
    const box = Buffer.from(
      'f3ffc7703f9400e52a7dfb4b3d3305d98e993b9f48681273c29650ba32fc76ce48332ea7164d96a4476fb8c531a1186ac0dfc17c98dce87b4da7f011ec48c97271d2c20f9b928fe2270d6fb863d51738b48eeee314a7cc8ab932164548e526ae90224368517acfeabd6bb3732bc0e9da99832b61ca01b6de56244a9e88d5f9b37973f622a43d14a6599b1f654cb45a74e355a5',
      'hex',
    );
    const provider = keyedProvider('secretbox', [{ name: 'k1', secret: firstkey }]);
    const stored = Buffer.concat([Buffer.from('k8s:enc:secretbox:v1:k1:'), nonce, box]);
    expect(Buffer.from(provider.open(stored, ad) as Uint8Array)).toEqual(message);
    const sealed = Buffer.from(provider.seal(plain, ad));
    expect(sealed.length).toBe('k8s:enc:secretbox:v1:k1:'.length + 24 + 16 + plain.length);
    expect(Buffer.from(provider.open(sealed, ad) as Uint8Array)).toEqual(plain);
  });

  it('reads with any listed key, writes with the first, and leaves other prefixes to other providers', () => {
    const old = keyedProvider('aescbc', [{ name: 'old', secret: key32 }]);
    const both = keyedProvider('aescbc', [
      { name: 'new', secret: Buffer.alloc(32, 1) },
      { name: 'old', secret: key32 },
    ]);
    const written = old.seal(plain, ad);
    expect(Buffer.from(both.open(written, ad) as Uint8Array)).toEqual(plain);
    expect(Buffer.from(both.seal(plain, ad)).toString('latin1')).toMatch(/^k8s:enc:aescbc:v1:new:/);
    expect(both.open(keyedProvider('aesgcm', [{ name: 'x', secret: key32 }]).seal(plain, ad), ad)).toBeUndefined();
    expect(() => keyedProvider('aescbc', [{ name: 'gone', secret: key32 }]).open(written, ad)).toThrow('no matching key');
  });

  it('identity reads plain values only', () => {
    expect(identityProvider.open(plain, ad)).toBe(plain);
    expect(identityProvider.open(Buffer.from('k8s:enc:aescbc:v1:k1:xyz'), ad)).toBeUndefined();
  });
});
