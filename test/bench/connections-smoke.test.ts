import { formatConnectionsTable, runConnectionsBench } from '../../bench/connections.js';

describe('bench/connections', () => {
  it('measures each server process on each connection path', async () => {
    const r = await runConnectionsBench(10);
    expect(Object.keys(r.cpuMsPerRequest)).toEqual(['tlsNewConnection', 'tlsKeptAlive', 'tlsResumed', 'unixNewConnection', 'unixKeptAlive', 'frontNewConnection', 'frontKeptAlive']);
    // Every request was served by the process measured: each one used some CPU for them.
    expect(r.cpuMsPerRequest.tlsNewConnection).toBeGreaterThan(0);
    expect(r.cpuMsPerRequest.frontNewConnection).toEqual([expect.any(Number), expect.any(Number)]);
    expect((r.cpuMsPerRequest.frontNewConnection as number[]).every((x) => x > 0)).toBe(true);
    expect(formatConnectionsTable(r).split('\n')).toHaveLength(2 + 7);
  }, 60_000);
});
