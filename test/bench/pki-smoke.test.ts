import { formatPkiTable, runPkiBench } from '../../bench/pki.js';

describe('bench/pki', () => {
  it('runs with a small n and reports every key type', async () => {
    const r = await runPkiBench({ n: 20, rounds: 1, distinctKeysPerType: 2 });
    expect(r.name).toBe('pki');
    expect(Object.keys(r.results)).toEqual(['ECDSA-P256', 'ECDSA-P384', 'RSA-2048', 'Ed25519', 'ECDSA-P256 (RSA-2048 CA)']);
    for (const row of Object.values(r.results)) {
      expect(row.issuancesPerSec).toBeGreaterThan(0);
      expect(row.ratioToRawSign).toBeCloseTo(row.issuancesPerSec / row.rawSignPerSec, 2);
      expect(row.rawSignPerSec).toBeLessThanOrEqual(r.rawSignPerSec);
    }
    expect(r.rawSignPerSec).toBeGreaterThan(0);
    expect(r.importVerifySignFloorPerSec).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(formatPkiTable(r).split('\n')).toHaveLength(2 + 5);
  });
});
