import type { ServiceAccountClaims } from './sa-token.js';
import { VerifiedTokens } from './verified-tokens.js';

const claims = (sub: string): ServiceAccountClaims => ({
  aud: ['api'],
  exp: 2,
  iat: 1,
  iss: 'issuer',
  nbf: 1,
  sub,
  'kubernetes.io': { namespace: 'default', serviceaccount: { name: sub, uid: 'u' } },
});
const signature = 'S'.repeat(20) + 'abcdefghijklmnopqrstuvwxyz0123456789';

describe('VerifiedTokens', () => {
  it('answers only for the whole token, however the lookup string was made', () => {
    const memo = new VerifiedTokens(16);
    const token = `header.payload.${signature}`;
    memo.set(token, claims('a'));
    // Equal text built afresh, as every request's token is.
    expect(memo.get(['header', 'payload', signature].join('.'))?.sub).toBe('a');
    for (const other of [`header.payloaD.${signature}`, `x.payload.${signature}`, signature, `header.payload.${signature}x`]) {
      expect(memo.get(other)).toBeUndefined();
    }
  });

  it('never lets a token with the same end read or remove another token', () => {
    const memo = new VerifiedTokens(16);
    const genuine = `header.payload.${signature}`;
    const forged = `header.forged.${signature}`;
    memo.set(genuine, claims('genuine'));
    expect(memo.get(forged)).toBeUndefined();
    memo.delete(forged);
    expect(memo.get(genuine)?.sub).toBe('genuine');
    memo.delete(genuine);
    expect(memo.get(genuine)).toBeUndefined();
    expect(memo.size).toBe(0);
  });

  it('holds short tokens too, and forgets the oldest past its limit', () => {
    const memo = new VerifiedTokens(2);
    memo.set('a.b.c', claims('1'));
    memo.set(`x.y.${signature}`, claims('2'));
    memo.set(`x.z.${'T'.repeat(40)}`, claims('3'));
    expect(memo.size).toBe(2);
    expect(memo.get('a.b.c')).toBeUndefined();
    expect(memo.get(`x.y.${signature}`)?.sub).toBe('2');
    expect(memo.get(`x.z.${'T'.repeat(40)}`)?.sub).toBe('3');
  });
});
