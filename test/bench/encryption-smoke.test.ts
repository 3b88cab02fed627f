import { formatEncryptionTable, runEncryptionBench } from '../../bench/encryption.js';

describe('bench/encryption', () => {
  it('measures Secret creates and gets and CSR creates on a plain and an encrypting server with tiny sizes', async () => {
    const r = await runEncryptionBench({ secrets: 20, csrs: 10, concurrency: 4, getMs: 200 });
    expect(r).toMatchObject({ name: 'encryption', params: { provider: 'secretbox', secrets: 20 } });
    expect(Object.keys(r.results)).toEqual(['secretCreate', 'secretGet', 'csrCreate']);
    for (const f of Object.values(r.results)) {
      for (const side of [f.bare, f.api]) {
        expect(side.errors).toBe(0);
        expect(side.perSec).toBeGreaterThan(0);
      }
      expect(f.ratio).toBeCloseTo(f.api.perSec / f.bare.perSec, 2);
    }
    expect([r.results.secretCreate.api.done, r.results.csrCreate.api.done, r.results.csrCreate.bare.done]).toEqual([20, 10, 10]);
    expect(r.ratios).toEqual({ secretCreate: r.results.secretCreate.ratio, secretGet: r.results.secretGet.ratio, csrCreate: r.results.csrCreate.ratio });
    // The encrypting server timed every Secret it sealed.
    expect(r.encryptUsPerWrite).toBeGreaterThan(0);
    expect(r.sealCpuUs).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(formatEncryptionTable(r).split('\n')).toHaveLength(3 + 1 + 4);
  }, 120_000);
});
