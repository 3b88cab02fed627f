import { errorKind } from '../../bench/lib/fleet-pool.js';
import { closedLoop, openLoop } from '../../bench/lib/load.js';
import { formatTable } from '../../bench/lib/report.js';
import { summarize } from '../../bench/lib/stats.js';
import { formatRunsTable, summarizeRuns } from '../../bench/lib/runs.js';
import { FleetSlice, Recorder } from '../../bench/lib/fleet-worker.js';
import { requestLabel, type SimKubelet } from '../../bench/lib/kubelet-sim.js';

describe('bench/lib', () => {
  it('formats a table with aligned columns', () => {
    const lines = formatTable(['op', 'n/s'], [['create', '5'], ['get', '12345']]).split('\n');
    expect(lines).toEqual(['op        n/s', 'create      5', 'get     12345']);
  });

  it('counts a fleet\'s errors by kind: HTTP by status, the rest without per-node numbers', () => {
    expect(errorKind('HTTP 429: {"kind":"Status","message":"too many requests"}')).toBe('HTTP 429');
    expect(errorKind('PUT leases: HTTP 409: {"kind":"Status","reason":"Conflict"}')).toBe('PUT leases: HTTP 409');
    expect(errorKind('join fleet-node-01234: Error: connect timeout')).toBe(errorKind('join fleet-node-04321: Error: connect timeout'));
    expect(errorKind('stream closed before its response (code 8, connection gone)')).toBe('stream closed before its response (code 8, connection gone)');
  });

  it("names a simulated kubelet's request by verb and resource, without its node's names", () => {
    const leases = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
    expect(requestLabel('PUT', `${leases}/fleet-node-7`)).toBe('PUT leases');
    expect(requestLabel('POST', leases)).toBe('POST leases');
    expect(requestLabel('PATCH', '/api/v1/nodes/fleet-node-7/status')).toBe('PATCH nodes/status');
    expect(requestLabel('GET', '/api/v1/nodes/fleet-node-7')).toBe('GET nodes');
    expect(requestLabel('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dfleet-node-7')).toBe('LIST pods');
    expect(requestLabel('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn&watch=true&resourceVersion=5')).toBe('WATCH pods');
    expect(requestLabel('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-abcde')).toBe('GET certificatesigningrequests');
  });

  it('summarises latencies with nearest-rank percentiles', () => {
    const s = summarize(Array.from({ length: 100 }, (_, i) => 100 - i));
    expect(s).toEqual({ count: 100, p50: 50, p90: 90, p99: 99, max: 100 });
    expect(summarize([])).toEqual({ count: 0, p50: 0, p90: 0, p99: 0, max: 0 });
  });

  it('bounds a closed loop by count and counts failures', async () => {
    const seen: number[] = [];
    const r = await closedLoop({ concurrency: 3, maxOps: 10, maxMs: 10_000, op: async (i) => {
      seen.push(i);
      if (i === 4) throw new Error('boom');
    } });
    expect(seen.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(r).toMatchObject({ ok: 9, errors: 1, firstError: 'boom' });
    expect(r.latencyMs.count).toBe(9);
  });

  it('bounds a closed loop by time', async () => {
    const r = await closedLoop({ concurrency: 1, maxOps: Number.MAX_SAFE_INTEGER, maxMs: 100, op: () => new Promise((res) => setTimeout(res, 10)) });
    expect(r.ok).toBeGreaterThan(0);
    expect(r.ok).toBeLessThan(50);
  });

  it('starts an open loop at the offered rate and counts operations that never finish', async () => {
    let started = 0;
    const r = await openLoop({ ratePerSec: 100, durationMs: 100, drainMs: 200, op: (i) => {
      started++;
      return i === 0 ? new Promise(() => {}) : Promise.resolve();
    } });
    expect(started).toBe(10);
    expect(r).toMatchObject({ ok: 9, errors: 1 });
  });

  it('keeps every run and gives the median and range of each figure, parameters left out', () => {
    const run = (perSec: number, p99: number): object => ({ name: 'x', params: { n: 5 }, cores: 2, results: { create: { perSec, latencyMs: { p99 } } } });
    const r = summarizeRuns('x', [run(100, 9), run(300, 5), run(200, 7), run(150, 30)]);
    expect(r.results).toHaveLength(4);
    expect(r.summary).toEqual({
      'results.create.perSec': { median: 175, min: 100, max: 300 },
      'results.create.latencyMs.p99': { median: 8, min: 5, max: 30 },
    });
    expect(formatRunsTable(r).split('\n')).toHaveLength(4);
  });
});

describe("bench/lib/fleet-worker's counts", () => {
  const target = { url: 'https://127.0.0.1:1', caPem: '', protocol: 'h2' as const, bootstrapToken: 'x.y' };

  it('counts the 429s a phase honoured, those to Lease renewals, and the longest Retry-After told', () => {
    const rec = new Recorder();
    rec.throttled(1, false);
    rec.throttled(4, true);
    rec.throttled(2, false);
    expect(rec.take()).toMatchObject({ throttled: 3, leaseThrottled: 1, retryAfterMaxSeconds: 4 });
    expect(rec.take()).toMatchObject({ throttled: 0, leaseThrottled: 0, retryAfterMaxSeconds: 0 });
  });

  it('keeps apart the latencies of requests that waited for their connection, whatever their kind', () => {
    const rec = new Recorder();
    rec.latency('mutating', 900, false, true);
    rec.latency('mutating', 20, true, false);
    rec.latency('get', 700, false, true);
    expect(rec.take()).toMatchObject({ mutating: [900, 20], get: [700], lease: [20], firstOnConnection: [900, 700] });
  });

  it("times each node's first Lease renewal after the restart's stop, once, from the stop", () => {
    const slice = new FleetSlice(target, [
      { name: 'a', ip: '10.0.0.1' },
      { name: 'b', ip: '10.0.0.2' },
      { name: 'c', ip: '10.0.0.3' },
    ]);
    try {
      const [a, b, c] = (slice as unknown as { nodes: SimKubelet[] }).nodes;
      const before = Date.now() - 5_000;
      for (const n of [a, b, c]) n!.lastRenewal = before;
      slice.markRestart();
      const stoppedAt = Date.now();
      a!.lastRenewal = stoppedAt + 12_000;
      b!.lastRenewal = stoppedAt + 20_000;
      slice.counts();
      // a renews again 10 s later: its first renewal since the stop still counts; c never renewed.
      a!.lastRenewal = stoppedAt + 22_000;
      const seconds = slice.take().renewedAfterStopSeconds.sort((x, y) => x - y);
      expect(seconds).toHaveLength(2);
      expect(seconds[0]).toBeCloseTo(12, 0);
      expect(seconds[1]).toBeCloseTo(20, 0);
      expect(slice.take().renewedAfterStopSeconds).toEqual([]);
    } finally {
      slice.stop();
    }
  });
});
