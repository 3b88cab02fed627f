import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { figure, fixedRateSvg, readBenchOutput, roundsSvg } from '../../bench/plot.js';
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
});
