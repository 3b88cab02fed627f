import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { CompactSign } from 'jose';
import { SERVICE_ACCOUNTS, PODS, SECRETS } from '../../src/apiserver/authentication/resource-infos.js';
import { loadSigningKey, keyIdFor } from '../../src/apiserver/authentication/sa-keys.js';
import { issueServiceAccountToken, type IssueTokenOptions, type ServiceAccountClaims } from '../../src/apiserver/authentication/sa-token.js';
import { createServiceAccountTokenAuthenticator, verifyServiceAccountToken } from '../../src/apiserver/authentication/sa-verify.js';
import { createTokenChain } from '../../src/apiserver/authentication/token-union.js';
import { MemoryObjects } from './fixtures.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const rsa = (): KeyObject => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const key = loadSigningKey(rsa());
const foreign = loadSigningKey(rsa());
const NOW = new Date('2030-01-01T00:00:00Z');

function b64(v: unknown): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url');
}

// Over a reader that only reads with promises, and over one that answers at once (as the store's does).
describe.each([false, true])('service-account JWTs (objects read at once: %s)', (readsAtOnce) => {
  let objects: MemoryObjects;
  let clock: Date;
  const chain = (): ReturnType<typeof createTokenChain> =>
    createTokenChain([createServiceAccountTokenAuthenticator({ keys: [key], issuers: [ISSUER], objects, now: () => clock })], [ISSUER]);
  const opts = (over: Partial<IssueTokenOptions> = {}): IssueTokenOptions => ({
    key,
    issuer: ISSUER,
    audiences: [ISSUER],
    namespace: 'default',
    serviceAccount: { name: 'builder', uid: 'sa-uid-1' },
    now: NOW,
    expirationSeconds: 3600,
    ...over,
  });

  beforeEach(() => {
    clock = new Date(NOW.getTime() + 1000);
    objects = new MemoryObjects(readsAtOnce);
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'builder', namespace: 'default', uid: 'sa-uid-1' } });
  });

  it('issues the upstream layout: {alg,kid} header, array aud, sorted claims, kubernetes.io claim', async () => {
    const { token } = await issueServiceAccountToken(opts());
    const [h, p] = token.split('.');
    expect(JSON.parse(Buffer.from(h ?? '', 'base64url').toString())).toEqual({ alg: 'RS256', kid: keyIdFor(key.publicKey) });
    const payloadText = Buffer.from(p ?? '', 'base64url').toString();
    const payload = JSON.parse(payloadText) as Record<string, unknown>;
    expect(Object.keys(payload)).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io', 'nbf', 'sub']);
    expect(payload).toMatchObject({
      aud: [ISSUER],
      iat: NOW.getTime() / 1000,
      nbf: NOW.getTime() / 1000,
      exp: NOW.getTime() / 1000 + 3600,
      sub: 'system:serviceaccount:default:builder',
      'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'builder', uid: 'sa-uid-1' } },
    });
  });

  it('authenticates a valid token as the service account', async () => {
    const { token, claims } = await issueServiceAccountToken(opts());
    const out = await chain().authenticate(token);
    expect(out.error).toBeUndefined();
    expect(out.response).toEqual({
      audiences: [ISSUER],
      user: {
        username: 'system:serviceaccount:default:builder',
        uid: 'sa-uid-1',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:default'],
        extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti ?? ''}`] },
      },
    });
  });

  it('refuses alg none', async () => {
    const { token } = await issueServiceAccountToken(opts());
    const [, p] = token.split('.');
    const forged = `${b64({ alg: 'none', kid: key.kid })}.${p}.`;
    const out = await chain().authenticate(forged);
    expect(out.response).toBeUndefined();
    expect(out.error).toBe('[invalid bearer token, square/go-jose: error in cryptographic primitive]');
  });

  it('refuses HS256 keyed with the public key (algorithm confusion)', async () => {
    const { token } = await issueServiceAccountToken(opts());
    const [, p] = token.split('.');
    const header = b64({ alg: 'HS256', kid: key.kid });
    const pem = key.publicKey.export({ type: 'spki', format: 'pem' });
    const sig = createHmac('sha256', pem).update(`${header}.${p}`).digest('base64url');
    const out = await chain().authenticate(`${header}.${p}.${sig}`);
    expect(out.response).toBeUndefined();
    expect(out.error).toMatch(/cryptographic primitive/);
  });

  it('refuses a token signed by a foreign key, with or without its kid', async () => {
    const { token } = await issueServiceAccountToken(opts({ key: foreign }));
    expect((await chain().authenticate(token)).error).toBe('[invalid bearer token, invalid signature, no keys found]');
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as object;
    const noKid = await new CompactSign(Buffer.from(JSON.stringify(claims))).setProtectedHeader({ alg: 'RS256' }).sign(foreign.privateKey);
    expect((await chain().authenticate(noKid)).error).toMatch(/cryptographic primitive/);
  });

  it('refuses a tampered payload', async () => {
    const { token } = await issueServiceAccountToken(opts());
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p ?? '', 'base64url').toString()) as { 'kubernetes.io': { namespace: string } };
    claims['kubernetes.io'].namespace = 'kube-system';
    const out = await chain().authenticate(`${h}.${b64(claims)}.${s}`);
    expect(out.response).toBeUndefined();
    expect(out.error).toMatch(/cryptographic primitive/);
  });

  it('treats a token of a foreign issuer as not ours', async () => {
    const { token } = await issueServiceAccountToken(opts({ issuer: 'https://evil.example' }));
    expect(await chain().authenticate(token)).toEqual({ error: 'invalid bearer token' });
  });

  it('refuses expired tokens beyond the 60 s leeway and accepts them within it', async () => {
    const { token } = await issueServiceAccountToken(opts({ expirationSeconds: 600 }));
    clock = new Date(NOW.getTime() + 630_000);
    expect((await chain().authenticate(token)).response).toBeDefined();
    clock = new Date(NOW.getTime() + 661_000);
    expect((await chain().authenticate(token)).error).toBe('[invalid bearer token, service account token has expired]');
  });

  it('refuses not-yet-valid tokens beyond the leeway', async () => {
    const { token } = await issueServiceAccountToken(opts({ now: new Date(NOW.getTime() + 120_000) }));
    expect((await chain().authenticate(token)).error).toBe('[invalid bearer token, service account token is not valid yet]');
  });

  it('refuses a wrong audience with upstream wording', async () => {
    const { token } = await issueServiceAccountToken(opts({ audiences: ['vault'] }));
    expect((await chain().authenticate(token)).error).toBe(
      `[invalid bearer token, token audiences ["vault"] is invalid for the target audiences ["${ISSUER}"]]`,
    );
    expect((await chain().authenticate(token, ['vault'])).response?.audiences).toEqual(['vault']);
  });

  it('refuses the token of a deleted, or deleted-and-recreated, service account', async () => {
    const { token } = await issueServiceAccountToken(opts());
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'builder', namespace: 'default', uid: 'sa-uid-2' } });
    expect((await chain().authenticate(token)).error).toBe(
      '[invalid bearer token, service account UID (sa-uid-2) does not match claim (sa-uid-1)]',
    );
    objects.remove(SERVICE_ACCOUNTS, 'default', 'builder');
    expect((await chain().authenticate(token)).error).toBe('[invalid bearer token, serviceaccounts "builder" not found]');
  });

  it('refuses a token whose service account has been deleting for over 60 s', async () => {
    const { token } = await issueServiceAccountToken(opts());
    const deletion = new Date(clock.getTime() - 61_000).toISOString();
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'builder', namespace: 'default', uid: 'sa-uid-1', deletionTimestamp: deletion } });
    expect((await chain().authenticate(token)).error).toBe('[invalid bearer token, service account default/builder has been deleted]');
  });

  it('checks pod and secret bindings for liveness and uid', async () => {
    objects.put(PODS, { metadata: { name: 'p', namespace: 'default', uid: 'pod-1' } });
    const { token } = await issueServiceAccountToken(opts({ pod: { name: 'p', uid: 'pod-1' }, node: { name: 'n1' } }));
    const ok = await chain().authenticate(token);
    expect(ok.response?.user.extra).toMatchObject({
      'authentication.kubernetes.io/pod-name': ['p'],
      'authentication.kubernetes.io/pod-uid': ['pod-1'],
      'authentication.kubernetes.io/node-name': ['n1'],
    });
    objects.put(PODS, { metadata: { name: 'p', namespace: 'default', uid: 'pod-2' } });
    expect((await chain().authenticate(token)).error).toBe(
      '[invalid bearer token, pod UID (pod-2) does not match service account pod ref claim (pod-1)]',
    );
    const secretBound = await issueServiceAccountToken(opts({ secret: { name: 's', uid: 'sec-1' } }));
    expect((await chain().authenticate(secretBound.token)).error).toBe('[invalid bearer token, service account token has been invalidated]');
    objects.put(SECRETS, { metadata: { name: 's', namespace: 'default', uid: 'sec-1' } });
    expect((await chain().authenticate(secretBound.token)).response).toBeDefined();
  });

  it('answers garbage without throwing', async () => {
    for (const t of ['', 'a.b.c', '{"x":1}.a.b', 'x'.repeat(5000), `${b64({ alg: 'RS256' })}.${b64({ iss: ISSUER })}.AAAA`]) {
      const out = await chain().authenticate(t);
      expect(out.response).toBeUndefined();
      expect(out.error).toMatch(/invalid bearer token/);
    }
  });

  it('never lets a remembered verification vouch for another token with the same header and claims', async () => {
    const tokens = chain();
    const { token } = await issueServiceAccountToken(opts());
    expect((await tokens.authenticate(token)).response?.user.username).toBe('system:serviceaccount:default:builder');
    const [h, p, s] = token.split('.');
    const forged = await new CompactSign(Buffer.from(p ?? '', 'base64url')).setProtectedHeader({ alg: 'RS256', kid: key.kid }).sign(foreign.privateKey);
    expect(forged.split('.').slice(0, 2)).toEqual([h, p]);
    const flipped = `${h}.${p}.${(s ?? '').startsWith('A') ? 'B' : 'A'}${(s ?? '').slice(1)}`;
    for (const t of [forged, flipped, `${h}.${p}.`]) {
      const out = await tokens.authenticate(t);
      expect(out.response).toBeUndefined();
      expect(out.error).toMatch(/invalid bearer token/);
    }
    expect((await tokens.authenticate(token)).response).toBeDefined();
  });

  it('refuses a remembered token once its account is gone or it expired', async () => {
    const tokens = chain();
    const { token } = await issueServiceAccountToken(opts());
    expect((await tokens.authenticate(token)).response).toBeDefined();
    objects.remove(SERVICE_ACCOUNTS, 'default', 'builder');
    expect((await tokens.authenticate(token)).error).toBe('[invalid bearer token, serviceaccounts "builder" not found]');
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'builder', namespace: 'default', uid: 'sa-uid-1' } });
    expect((await tokens.authenticate(token)).response).toBeDefined();
    clock = new Date(NOW.getTime() + 3600_000 + 61_000);
    expect((await tokens.authenticate(token)).error).toBe('[invalid bearer token, service account token has expired]');
  });

  it('hands every use of a token one frozen user, and still checks its account and bound objects each time', async () => {
    objects.put(SECRETS, { metadata: { name: 's', namespace: 'default', uid: 'sec-1' } });
    objects.put(PODS, { metadata: { name: 'p', namespace: 'default', uid: 'pod-1' } });
    const tokens = chain();
    for (const bound of [{ secret: { name: 's', uid: 'sec-1' } }, { pod: { name: 'p', uid: 'pod-1' }, node: { name: 'n1', uid: 'node-1' } }]) {
      const { token } = await issueServiceAccountToken(opts(bound));
      const first = (await tokens.authenticate(token)).response?.user;
      const user = (await tokens.authenticate(token)).response?.user;
      expect(user).toBe(first);
      if (!user) throw new Error('the token was refused');
      expect(Object.isFrozen(user) && Object.isFrozen(user.groups) && Object.isFrozen(user.extra)).toBe(true);
      const writes: (() => unknown)[] = [
        () => user.groups.push('system:masters'),
        () => (user.groups[0] = 'system:masters'),
        () => (user.username = 'admin'),
        () => (user.uid = 'x'),
        () => ((user.extra ?? {})['authentication.kubernetes.io/credential-id']?.push('JTI=other')),
        () => ((user.extra ?? {})['injected'] = ['x']),
        () => (user.extra = {}),
      ];
      for (const write of writes) expect(write).toThrow(TypeError);
      expect((await tokens.authenticate(token)).response?.user).toEqual({
        username: 'system:serviceaccount:default:builder',
        uid: 'sa-uid-1',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:default'],
        extra: expect.objectContaining({ 'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^JTI=/)] }) as unknown,
      });
    }
    // The shared user vouches for nothing: each revocation is seen on the next use.
    const secretBound = (await issueServiceAccountToken(opts({ secret: { name: 's', uid: 'sec-1' } }))).token;
    const podBound = (await issueServiceAccountToken(opts({ pod: { name: 'p', uid: 'pod-1' } }))).token;
    expect((await tokens.authenticate(secretBound)).response).toBeDefined();
    expect((await tokens.authenticate(podBound)).response).toBeDefined();
    objects.remove(SECRETS, 'default', 's');
    expect((await tokens.authenticate(secretBound)).error).toBe('[invalid bearer token, service account token has been invalidated]');
    objects.remove(PODS, 'default', 'p');
    expect((await tokens.authenticate(podBound)).error).toBe('[invalid bearer token, service account token has been invalidated]');
    objects.put(PODS, { metadata: { name: 'p', namespace: 'default', uid: 'pod-2' } });
    expect((await tokens.authenticate(podBound)).error).toBe('[invalid bearer token, pod UID (pod-2) does not match service account pod ref claim (pod-1)]');
    objects.put(SERVICE_ACCOUNTS, { metadata: { name: 'builder', namespace: 'default', uid: 'sa-uid-2' } });
    const plain = (await issueServiceAccountToken(opts())).token;
    expect((await tokens.authenticate(plain)).error).toBe('[invalid bearer token, service account UID (sa-uid-2) does not match claim (sa-uid-1)]');
    objects.remove(SERVICE_ACCOUNTS, 'default', 'builder');
    expect((await tokens.authenticate(plain)).error).toBe('[invalid bearer token, serviceaccounts "builder" not found]');
    // The account and the Secret are read together, and checked in upstream's order: the account first.
    expect((await tokens.authenticate(secretBound)).error).toBe('[invalid bearer token, serviceaccounts "builder" not found]');
  });

  it('keeps a verified token in the memo no longer than its expiry', async () => {
    const verified = new Map<string, ServiceAccountClaims>();
    const { token } = await issueServiceAccountToken(opts());
    const check = (now: Date): ReturnType<typeof verifyServiceAccountToken> =>
      verifyServiceAccountToken(token, { keys: [key], issuers: [ISSUER], audiences: [ISSUER], now, verified });
    await check(clock);
    expect(verified.has(token)).toBe(true);
    const expired = new Date(NOW.getTime() + 3600_000 + 61_000);
    await expect(check(expired)).rejects.toThrow('service account token has expired');
    expect(verified.has(token)).toBe(false);
    // An expired token met for the first time is refused and not kept either.
    await expect(check(expired)).rejects.toThrow('service account token has expired');
    expect(verified.size).toBe(0);
  });

  it('refuses an ES256 token when the RS256 key carries the same kid', async () => {
    const ec = loadSigningKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    const { token } = await issueServiceAccountToken(opts({ key: { ...ec, kid: key.kid } }));
    expect((await chain().authenticate(token)).error).toMatch(/cryptographic primitive/);
  });
});
