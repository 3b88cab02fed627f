import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fleetResultFile } from '../../bench/fleet.js';
import { figure, fixedRateSvg, fleetFiles, fleetPoint, fleetSvg, readBenchOutput, roundsSvg } from '../../bench/plot.js';
import { summarizeRuns } from '../../bench/lib/runs.js';

const e2e = (csrsPerSec: number, p99: number, rate = 100): object => ({
  name: 'e2e',
  params: { fixedRate: rate },
  sustained: { csrsPerSec },
  fixedRate: { csrsPerSec: rate, offeredPerSec: rate, latencyMs: { p50: p99 / 4, p90: p99 / 2, p99 } },
});

describe('bench/plot', () => {
  it('reads a bench output (tables around the JSON line) and a figure from one run or a --runs summary', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plot-'));
    const one = path.join(dir, 'one.out');
    writeFileSync(one, `\n== e2e\n${JSON.stringify(e2e(300, 20))}\nmode  issued\n`);
    expect(figure(readBenchOutput(one), 'sustained.csrsPerSec')).toEqual({ median: 300, min: 300, max: 300 });
    const runs = summarizeRuns('e2e', [e2e(300, 20), e2e(340, 60), e2e(310, 25)]);
    expect(figure(runs, 'fixedRate.latencyMs.p99')).toEqual({ median: 25, min: 20, max: 60 });
    expect(() => figure(runs, 'nope')).toThrow('no nope');
  });

  it('draws the rounds and the fixed-rate latencies as SVG from those figures', () => {
    const rounds = JSON.parse(readFileSync('docs/bench/rounds.json', 'utf8')) as { rounds: Parameters<typeof roundsSvg>[0] };
    const s = roundsSvg([...rounds.rounds, { label: 'round 4', csrsPerSec: { median: 400, min: 350, max: 450 }, p99At100Ms: { median: 20, min: 15, max: 30 } }]);
    expect(s).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(s.match(/<circle /g)).toHaveLength(4 + 3); // four rates; p99 medians of rounds 1, 2 and 4 (round 3's is not known)
    expect(s).toContain('round 4');
    const f = fixedRateSvg([50, 100, 200, 400].map((rate) => ({
      rate,
      p50: { median: rate / 10, min: 1, max: rate },
      p90: { median: rate / 5, min: 1, max: rate },
      p99: { median: rate / 2, min: 1, max: rate },
      issuedPerSec: { median: rate, min: rate, max: rate },
    })));
    expect(f.match(/<polyline /g)).toHaveLength(3);
    expect(f).toContain('400/s');
  });

  it('reads a fleet series from the directory bench fleet --out wrote, and draws cost and p99s against N', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plot-fleet-'));
    const fleet = (nodes: number, http1 = false) => ({
      name: 'fleet',
      nodes,
      params: { nodes, http1 },
      cpuPercentPer1000Nodes: 9.5,
      peakRssMb: { apiserver: 200 + nodes * 0.4 },
      mutatingP99Ms: nodes,
      leaseRenewP99Ms: nodes / 2,
      getP99Ms: nodes / 4,
      listP99Ms: nodes * 2,
      phases: { join: { upCpuMsPerNode: 30 } },
    });
    for (const r of [fleet(500), fleet(100), fleet(100, true)]) writeFileSync(fleetResultFile(dir, r), `${JSON.stringify(r)}\n`);
    // The HTTP/1.1 comparison run (fleet-100-http1.json) is not part of the series.
    const files = fleetFiles([dir]).sort();
    expect(files.map((f) => path.basename(f))).toEqual(['fleet-100.json', 'fleet-500.json']);
    const points = files.map((f) => fleetPoint(readBenchOutput(f, 'fleet')));
    expect(points[0]).toEqual({ nodes: 100, steadyCpuPer1000: 9.5, joinCpuMsPerNode: 30, rssMbPer1000: 2400, mutatingP99Ms: 100, leaseRenewP99Ms: 50, getP99Ms: 25, listP99Ms: 200 });
    expect(points[1]?.rssMbPer1000).toBe(800);
    const s = fleetSvg(points);
    expect(s).toMatch(/^<svg /);
    expect(s.match(/<polyline /g)).toHaveLength(4);
    expect(s).toContain('per 1,000 nodes');
    expect(s).toContain('>500<');
  });
});
