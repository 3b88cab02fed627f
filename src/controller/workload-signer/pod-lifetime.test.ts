import { podCertificateTimes, rfc3339 } from './pod-lifetime.js';

const HOUR = 3_600_000;
const now = Date.parse('2026-11-26T12:00:00.750Z');
const farCa = new Date(now + 365 * 24 * HOUR);

describe('pod certificate times', () => {
  it('starts now (whole seconds, no backdate) and lives the smaller of the request and the policy', () => {
    const t = podCertificateTimes({ now, maxExpirationSeconds: 86_400, policyMaxMs: 6 * HOUR, caNotAfter: farCa, jitter: 0 });
    if ('refusal' in t) throw new Error(t.refusal);
    expect(rfc3339(t.notBefore)).toBe('2026-11-26T12:00:00Z');
    expect(t.notAfter.getTime() - t.notBefore.getTime()).toBe(6 * HOUR);
    const shorter = podCertificateTimes({ now, maxExpirationSeconds: 7200, policyMaxMs: 24 * HOUR, caNotAfter: farCa, jitter: 0 });
    if ('refusal' in shorter) throw new Error(shorter.refusal);
    expect(shorter.notAfter.getTime() - shorter.notBefore.getTime()).toBe(2 * HOUR);
  });

  it('puts beginRefreshAt between 1/2 and 4/5 of the lifetime, by the jitter', () => {
    const at = (jitter: number): number => {
      const t = podCertificateTimes({ now, maxExpirationSeconds: 10 * 3600, policyMaxMs: 24 * HOUR, caNotAfter: farCa, jitter });
      if ('refusal' in t) throw new Error(t.refusal);
      return (t.beginRefreshAt.getTime() - t.notBefore.getTime()) / HOUR;
    };
    expect([at(0), at(0.5)]).toEqual([5, 6.5]);
    // Just under 4/5 (8 h), in whole seconds.
    expect(at(0.999999)).toBe(8 - 1 / 3600);
  });

  it('never outlives the CA, and refuses when that leaves less than an hour', () => {
    const ca = new Date(now + 2 * HOUR);
    const t = podCertificateTimes({ now, maxExpirationSeconds: 86_400, policyMaxMs: 24 * HOUR, caNotAfter: ca, jitter: 1 });
    if ('refusal' in t) throw new Error(t.refusal);
    expect(t.notAfter.getTime()).toBe(Math.floor(ca.getTime() / 1000) * 1000);
    expect(t.beginRefreshAt.getTime()).toBeLessThanOrEqual(t.notAfter.getTime() - 10 * 60_000);
    expect(podCertificateTimes({ now, maxExpirationSeconds: 86_400, policyMaxMs: 24 * HOUR, caNotAfter: new Date(now + 59 * 60_000), jitter: 0 })).toEqual({
      refusal: expect.stringContaining('a pod certificate must live at least 1h'),
    });
  });
});
