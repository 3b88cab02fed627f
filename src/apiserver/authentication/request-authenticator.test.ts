import { plainExtra, withAuthenticatedGroup } from './request-authenticator.js';

describe('plainExtra', () => {
  it('copies a shared frozen user\'s extra into fresh, writable arrays, in the same order', () => {
    const extra: Readonly<Record<string, string[]>> = Object.freeze({
      'authentication.kubernetes.io/pod-name': Object.freeze(['p']) as string[],
      'authentication.kubernetes.io/credential-id': Object.freeze(['JTI=1', 'JTI=2']) as string[],
    });
    const user = withAuthenticatedGroup(Object.freeze({ username: 'u', groups: Object.freeze(['g']) as string[], extra }));
    const copy = plainExtra(user.extra ?? {});
    expect(JSON.stringify(copy)).toBe(JSON.stringify(extra));
    expect(Object.isFrozen(copy)).toBe(false);
    for (const [key, values] of Object.entries(copy)) {
      expect(values).not.toBe(extra[key]);
      expect(Object.isFrozen(values)).toBe(false);
    }
    copy['authentication.kubernetes.io/pod-name']?.push('q');
    expect(extra['authentication.kubernetes.io/pod-name']).toEqual(['p']);
  });
});
