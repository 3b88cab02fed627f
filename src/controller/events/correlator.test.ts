import { COMBINED_PREFIX, EventCorrelator, type Occurrence } from './correlator.js';

const MIN = 60_000;
const csr = (name: string, note = 'Certificate issued by signer s'): Occurrence => ({
  component: 'csrsigning-s',
  regarding: { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', name, uid: `uid-${name}` },
  type: 'Normal',
  reason: 'CertificateIssued',
  action: 'Sign',
  note,
});

describe('EventCorrelator', () => {
  it('makes isomorphic repeats one series, and a different note another Event', () => {
    const c = new EventCorrelator();
    const first = c.observe(csr('a'), 0);
    expect(c.observe(csr('a'), 1000)).toBe(first);
    expect(c.observe(csr('a'), 2000)).toBe(first);
    expect(first).toMatchObject({ count: 3, firstAt: 0, lastAt: 2000, writtenCount: 0 });
    expect(c.observe(csr('a', 'other note'), 3000)).not.toBe(first);
  });

  it('finishes a series after a pause of seriesFinishMs: the next occurrence is a new Event', () => {
    const c = new EventCorrelator({ seriesFinishMs: 6 * MIN });
    const first = c.observe(csr('a'), 0);
    first.writtenCount = 1;
    expect(c.pending(6 * MIN)).toEqual([]);
    expect(c.size).toBe(0);
    const next = c.observe(csr('a'), 6 * MIN);
    expect(next).not.toBe(first);
    expect(next.count).toBe(1);
  });

  it('writes maxSimilar objects separately, then folds the rest into one combined series for the kind', () => {
    const c = new EventCorrelator({ maxSimilar: 10 });
    const own = Array.from({ length: 10 }, (_, i) => c.observe(csr(`n${i}`), i));
    expect(new Set(own).size).toBe(10);
    const combined = c.observe(csr('n10'), 10);
    expect(combined.occurrence.regarding).toEqual({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest' });
    expect(combined.occurrence.note).toBe(`${COMBINED_PREFIX}Certificate issued by signer s`);
    for (let i = 11; i < 500; i++) expect(c.observe(csr(`n${i}`), i)).toBe(combined);
    expect(combined.count).toBe(490);
    // A repeat about an object that has its own Event still counts there.
    expect(c.observe(csr('n3'), 600)).toBe(own[3]);
    // Another reason is not similar.
    expect(c.observe({ ...csr('n11'), reason: 'AutoApproved' }, 700).occurrence.regarding.name).toBe('n11');
  });

  it('restarts the similar count after a pause of similarWindowMs', () => {
    const c = new EventCorrelator({ maxSimilar: 2, similarWindowMs: 10 * MIN });
    c.observe(csr('a'), 0);
    c.observe(csr('b'), 1);
    expect(c.observe(csr('c'), 2).occurrence.regarding.name).toBeUndefined();
    expect(c.observe(csr('d'), 2 + 10 * MIN).occurrence.regarding.name).toBe('d');
  });

  it('pending() returns what the server has not seen, and forget() lets an occurrence start afresh', () => {
    const c = new EventCorrelator();
    const a = c.observe(csr('a'), 0);
    const b = c.observe(csr('b'), 0);
    b.writtenCount = 1;
    expect(c.pending(1)).toEqual([a]);
    c.observe(csr('b'), 2);
    expect(c.pending(3)).toEqual([a, b]);
    c.forget(a);
    expect(c.observe(csr('a'), 4)).not.toBe(a);
  });

  it('keeps at most maxEntries series, dropping the oldest', () => {
    const c = new EventCorrelator({ maxEntries: 3, maxSimilar: 100 });
    const first = c.observe(csr('a'), 0);
    for (const n of ['b', 'c', 'd']) c.observe(csr(n), 1);
    expect(c.size).toBe(3);
    expect(c.observe(csr('a'), 2)).not.toBe(first);
  });
});
