import { Registry } from 'prom-client';
import { FakeClock } from '../../lib/clock.js';
import { WorkqueueMetrics } from '../../metrics/workqueue.js';
import { RateLimitingQueue } from './rate-limiting.js';
import { BucketRateLimiter, controllerRateLimiter, ItemExponentialRateLimiter } from './rate-limiter.js';

function queue(clock = new FakeClock(), registry?: Registry): RateLimitingQueue {
  return new RateLimitingQueue({ name: 'test', clock, metrics: registry ? WorkqueueMetrics.for(registry) : undefined });
}

describe('WorkQueue', () => {
  it('stores a waiting key once however often it is added', async () => {
    const q = queue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  it('never hands a key in processing to a second worker, and reprocesses it after done', async () => {
    const q = queue();
    q.add('a');
    const first = await q.get();
    q.add('a');
    expect(q.len()).toBe(0);
    let second: string | undefined = 'none';
    const pending = q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBe('none');
    q.done(first as string);
    await pending;
    expect(second).toBe('a');
  });

  it('hands out queued keys after shutdown, then undefined, and ignores new adds', async () => {
    const q = queue();
    q.add('a');
    q.shutDown();
    q.add('b');
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBeUndefined();
  });

  it('wakes idle workers on shutdown', async () => {
    const q = queue();
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
  });

  it('shutDownWithDrain waits until in-flight keys are done', async () => {
    const q = queue();
    q.add('a');
    const key = (await q.get()) as string;
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    q.done(key);
    await drain;
    expect(drained).toBe(true);
  });

  it('addAfter releases keys in ready-time order through one timer, keeping the earliest time', async () => {
    const clock = new FakeClock();
    const q = queue(clock);
    q.addAfter('late', 300);
    q.addAfter('early', 100);
    q.addAfter('mid', 200);
    q.addAfter('late', 500); // later than the existing 300: ignored
    q.addAfter('mid', 50); // earlier: moves up
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(60);
    expect(q.len()).toBe(1);
    clock.advance(240);
    expect(q.len()).toBe(3);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['mid', 'early', 'late']);
    expect(q.waitingCount()).toBe(0);
  });

  it('counts requeues and forgets them', () => {
    const clock = new FakeClock();
    const q = queue(clock);
    q.addRateLimited('a');
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(2);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });

  it('exports client-go workqueue metrics that move', async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const q = queue(clock, registry);
    q.add('a');
    q.add('b');
    q.addRateLimited('c');
    const key = (await q.get()) as string;
    clock.advance(2000); // also releases 'c' after its 200 ms backoff
    const text = await registry.metrics();
    expect(text).toMatch(/workqueue_depth\{name="test"\} 2/);
    expect(text).toMatch(/workqueue_adds_total\{name="test"\} 3/);
    expect(text).toMatch(/workqueue_retries_total\{name="test"\} 1/);
    expect(text).toMatch(/workqueue_longest_running_processor_seconds\{name="test"\} 2/);
    expect(text).toMatch(/workqueue_unfinished_work_seconds\{name="test"\} 2/);
    q.done(key);
    const after = await registry.metrics();
    expect(after).toMatch(/workqueue_work_duration_seconds_count\{name="test"\} 1/);
    expect(after).toMatch(/workqueue_queue_duration_seconds_count\{name="test"\} 1/);
  });
});

describe('rate limiters', () => {
  it('per-item exponential: 200ms × 2^n capped at 1000s', () => {
    const l = new ItemExponentialRateLimiter(200, 1_000_000);
    const delays = Array.from({ length: 15 }, () => l.when('k'));
    expect(delays.slice(0, 5)).toEqual([200, 400, 800, 1600, 3200]);
    delays.forEach((d, n) => expect(d).toBe(Math.min(200 * 2 ** n, 1_000_000)));
    expect(delays[13]).toBe(1_000_000);
    expect(l.when('other')).toBe(200);
    l.forget('k');
    expect(l.when('k')).toBe(200);
  });

  it('token bucket: free during the burst, then 1/qps apart, refilling with time', () => {
    const clock = new FakeClock();
    const b = new BucketRateLimiter(10, 100, clock);
    for (let i = 0; i < 100; i++) expect(b.when(`k${i}`)).toBe(0);
    expect(b.when('x')).toBe(100);
    expect(b.when('y')).toBe(200);
    clock.advance(1000);
    // 10 tokens came back, 2 were already owed.
    for (let i = 0; i < 8; i++) expect(b.when(`z${i}`)).toBe(0);
    expect(b.when('w')).toBe(100);
  });

  it('controller limiter takes the maximum of both', () => {
    const clock = new FakeClock();
    const l = controllerRateLimiter(clock, { baseDelayMs: 200, maxDelayMs: 1_000_000, qps: 1, burst: 1 });
    expect(l.when('a')).toBe(200);
    expect(l.when('b')).toBe(1000); // bucket empty: 1 s at 1 qps beats 200 ms
    expect(l.numRequeues('a')).toBe(1);
  });
});
