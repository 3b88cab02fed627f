import { Registry } from 'prom-client';
import { ScrapedCounter } from './scraped-counter.js';

describe('ScrapedCounter', () => {
  it('shows every count at each scrape, as counting on the spot would', async () => {
    const registry = new Registry();
    const c = new ScrapedCounter<'result'>({ name: 'attempts_total', help: 'Attempts.', labelNames: ['result'], registers: [registry] });
    expect(await registry.metrics()).not.toMatch(/^attempts_total\{/m);
    c.inc('ok', () => ({ result: 'ok' }));
    c.inc('ok', () => ({ result: 'ok' }));
    c.inc('bad', () => ({ result: 'bad' }));
    expect(await registry.metrics()).toMatch(/^attempts_total\{result="ok"\} 2$/m);
    expect(await registry.metrics()).toMatch(/^attempts_total\{result="bad"\} 1$/m);
    c.inc('ok', () => ({ result: 'ok' }));
    const text = await registry.metrics();
    expect(text).toMatch(/^attempts_total\{result="ok"\} 3$/m);
    expect(text).toMatch(/^attempts_total\{result="bad"\} 1$/m);
  });

  it('reads the labels only the first time a key is counted', () => {
    const c = new ScrapedCounter<'k'>({ name: 'k_total', help: 'K.', labelNames: ['k'], registers: [new Registry()] });
    let made = 0;
    for (let i = 0; i < 3; i++) c.inc('a', () => (made++, { k: 'a' }));
    expect(made).toBe(1);
  });

  it('shows a zeroed series at 0 before its first increment, and counts on from there', async () => {
    const registry = new Registry();
    const c = new ScrapedCounter<'result'>({ name: 'tries_total', help: 'Tries.', labelNames: ['result'], registers: [registry] });
    c.zero('ok', () => ({ result: 'ok' }));
    expect(await registry.metrics()).toMatch(/^tries_total\{result="ok"\} 0$/m);
    c.inc('ok', () => ({ result: 'ok' }));
    c.zero('ok', () => ({ result: 'ok' }));
    c.inc('ok', () => ({ result: 'ok' }));
    expect(await registry.metrics()).toMatch(/^tries_total\{result="ok"\} 2$/m);
  });
});
