import { PkiError } from './errors.js';
import { certificateLifetime, formatGoTime, requestedDuration } from './lifetime.js';

const H = 3_600_000;
const M = 60_000;
const now = new Date('2025-06-01T12:00:00Z');
const farCa = new Date('2035-01-01T00:00:00Z');
const validity = (expirationSeconds?: number, maxDuration = 24 * H): number => {
  const { notBefore, notAfter } = certificateLifetime({ now, caNotAfter: farCa, maxDuration, expirationSeconds });
  return notAfter.getTime() - notBefore.getTime();
};

describe('certificateLifetime', () => {
  // The upstream integration-test table (certTTL = 24h).
  it.each<[string, number | undefined, number]>([
    ['none', undefined, 24 * H],
    ['24h', 24 * 3600, 24 * H],
    ['48h', 48 * 3600, 24 * H],
    ['20h', 20 * 3600, 20 * H],
    ['10h', 10 * 3600, 10 * H],
    ['2h', 2 * 3600, 2 * H + 5 * M],
    ['30m', 30 * 60, 35 * M],
    ['10m', 10 * 60, 15 * M],
  ])('requested %s gives the upstream validity', (_name, seconds, want) => {
    expect(validity(seconds)).toBe(want);
  });

  it('backdates NotBefore by 5 minutes and raises requests below 10 minutes', () => {
    const r = certificateLifetime({ now, caNotAfter: farCa, maxDuration: 24 * H, expirationSeconds: 60 });
    expect(r.notBefore.toISOString()).toBe('2025-06-01T11:55:00.000Z');
    expect(r.notAfter.toISOString()).toBe('2025-06-01T12:10:00.000Z');
    expect(certificateLifetime({ now, caNotAfter: farCa, maxDuration: 24 * H, backdate: 0 }).notBefore).toEqual(now);
  });

  it('clamps NotAfter to the CA expiry', () => {
    const caNotAfter = new Date(now.getTime() + H);
    expect(certificateLifetime({ now, caNotAfter, maxDuration: 24 * H }).notAfter).toEqual(caNotAfter);
  });

  it('refuses to sign once the CA has expired, with the upstream messages', () => {
    const caNotAfter = new Date('2025-06-01T11:58:00Z');
    expect(() => certificateLifetime({ now, caNotAfter, maxDuration: H })).toThrow(
      new PkiError('refusing to sign a certificate that expired in the past: NotAfter=2025-06-01 11:58:00 +0000 UTC'),
    );
    const longGone = new Date('2025-06-01T11:50:00Z');
    expect(() => certificateLifetime({ now, caNotAfter: longGone, maxDuration: H })).toThrow(
      new PkiError('the signer has expired: NotAfter=2025-06-01 11:50:00 +0000 UTC'),
    );
  });
});

describe('requestedDuration', () => {
  it('follows the order of upstream checks (max first, then the 10 minute floor)', () => {
    expect(requestedDuration(5 * M, 400)).toBe(5 * M);
    expect(requestedDuration(5 * M, 60)).toBe(10 * M);
    expect(requestedDuration(H, null)).toBe(H);
    expect(requestedDuration(H, 599)).toBe(10 * M);
    expect(requestedDuration(H, 1800)).toBe(30 * M);
  });
});

describe('formatGoTime', () => {
  it('prints like Go time.Time.String in UTC', () => {
    expect(formatGoTime(new Date('2026-01-02T03:04:05Z'))).toBe('2026-01-02 03:04:05 +0000 UTC');
    expect(formatGoTime(new Date('2026-01-02T03:04:05.120Z'))).toBe('2026-01-02 03:04:05.12 +0000 UTC');
  });
});
