import { Histogram, Registry } from 'prom-client';
import { ScrapedHistogram } from './scraped-histogram.js';

const BUCKETS = [0.005, 0.025, 0.1, 1];
const OBSERVED: [string, number][] = [
  ['GET', 0.001],
  ['GET', 0.005],
  ['GET', 0.02],
  ['POST', 0.3],
  ['GET', 7],
  ['POST', 0.025],
];

describe('ScrapedHistogram', () => {
  it('scrapes exactly as prom-client’s Histogram given the same observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const h = new ScrapedHistogram<'verb' | 'code'>({ name: 'request_seconds', help: 'Latency.', labelNames: ['verb', 'code'], buckets: BUCKETS, registers: [ours] });
    const p = new Histogram<'verb' | 'code'>({ name: 'request_seconds', help: 'Latency.', labelNames: ['verb', 'code'], buckets: BUCKETS, registers: [theirs] });
    expect(await ours.metrics()).toBe(await theirs.metrics());
    for (const [verb, v] of OBSERVED) {
      h.observe(verb, () => ({ verb, code: '200' }), v);
      p.observe({ verb, code: '200' }, v);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    // Boundaries are inclusive (0.005 and 0.025 fall in their own buckets), and 7 only in +Inf.
    expect(text).toMatch(/^request_seconds_bucket\{le="0.005",verb="GET",code="200"\} 2$/m);
    expect(text).toMatch(/^request_seconds_bucket\{le="0.025",verb="POST",code="200"\} 1$/m);
    expect(text).toMatch(/^request_seconds_bucket\{le="1",verb="GET",code="200"\} 3$/m);
    expect(text).toMatch(/^request_seconds_bucket\{le="\+Inf",verb="GET",code="200"\} 4$/m);
    expect(text).toMatch(/^request_seconds_count\{verb="POST",code="200"\} 2$/m);
    // The JSON form too, but for prom-client's exemplar slots (null: exemplars are off).
    const json = (await theirs.getMetricsAsJSON()).map((m) => ({ ...m, values: m.values.map((v) => ({ metricName: (v as { metricName?: string }).metricName, labels: v.labels, value: v.value })) }));
    expect(await ours.getMetricsAsJSON()).toEqual(json);
    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('reads the labels only the first time a key is observed', () => {
    const h = new ScrapedHistogram<'k'>({ name: 'k_seconds', help: 'K.', labelNames: ['k'], buckets: BUCKETS, registers: [new Registry()] });
    let made = 0;
    for (let i = 0; i < 3; i++) h.observe('a', () => (made++, { k: 'a' }), 0.01);
    expect(made).toBe(1);
  });
});
