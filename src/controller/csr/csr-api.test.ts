/**
 * The approver's SubjectAccessReviews, with the API at its boundary faked to count them: reconciles
 * that ask the same question in one turn share one review sent after all of them asked; a question
 * asked once that review is under way gets a review of its own, so no answer predates its question.
 */
import { CsrApi, type Requester } from './csr-api.js';

interface SentReview {
  spec: { user: string; uid?: string; groups?: string[]; extra?: Record<string, string[]>; resourceAttributes: { subresource: string } };
}

function countingApi(allowedUsers: Set<string>): { api: CsrApi; sent: SentReview[]; answer: () => void } {
  const sent: SentReview[] = [];
  let release: (() => void)[] = [];
  const raw = {
    requestJSON: <T>(_m: string, _p: string, _q: unknown, _s: unknown, body: unknown): Promise<T> => {
      const review = body as SentReview;
      sent.push(review);
      // Answered when the test says so: a review stays under way until then.
      return new Promise<T>((resolve) => release.push(() => resolve({ status: { allowed: allowedUsers.has(review.spec.user) } } as T)));
    },
    write: (): Promise<void> => Promise.resolve(),
  };
  const answer = (): void => {
    const pending = release;
    release = [];
    for (const r of pending) r();
  };
  return { api: new CsrApi(raw), sent, answer };
}

const bootstrap: Requester = { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] };
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('CsrApi.allowed', () => {
  it('sends one review for the same requester and subresource asked within a turn, with every field of the identity', async () => {
    const { api, sent, answer } = countingApi(new Set([bootstrap.username]));
    const asked = [api.allowed(bootstrap, 'nodeclient'), api.allowed({ ...bootstrap, groups: [...(bootstrap.groups ?? [])] }, 'nodeclient')];
    await tick();
    answer();
    expect(await Promise.all(asked)).toEqual([true, true]);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.spec).toEqual({
      user: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', 'system:authenticated'],
      resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'create', subresource: 'nodeclient' },
    });
  });

  it('never shares between requesters that differ in any field, or between subresources', async () => {
    const { api, sent, answer } = countingApi(new Set([bootstrap.username]));
    const variants: [Requester, string][] = [
      [bootstrap, 'nodeclient'],
      [bootstrap, 'selfnodeclient'],
      [{ ...bootstrap, uid: 'u-1' }, 'nodeclient'],
      [{ ...bootstrap, groups: ['system:bootstrappers'] }, 'nodeclient'],
      [{ ...bootstrap, extra: { scope: ['x'] } }, 'nodeclient'],
      [{ username: 'alice', groups: bootstrap.groups }, 'nodeclient'],
    ];
    const asked = variants.map(([who, sub]) => api.allowed(who, sub));
    await tick();
    answer();
    expect(await Promise.all(asked)).toEqual([true, true, true, true, true, false]);
    expect(sent).toHaveLength(variants.length);
    expect(sent[4]?.spec.extra).toEqual({ scope: ['x'] });
    expect(sent[2]?.spec.uid).toBe('u-1');
  });

  it('a question asked while the review is under way waits for a review of its own', async () => {
    const { api, sent, answer } = countingApi(new Set([bootstrap.username]));
    const first = api.allowed(bootstrap, 'nodeclient');
    await tick();
    expect(sent).toHaveLength(1);
    const late = api.allowed(bootstrap, 'nodeclient');
    answer();
    expect(await first).toBe(true);
    await tick();
    expect(sent).toHaveLength(2);
    answer();
    expect(await late).toBe(true);
  });
});
