import { ApiException } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { FakeClock } from '../../lib/clock.js';
import { silentLogger } from '../../log/logger.js';
import { ControllerMetrics } from '../../metrics/controller.js';
import { TerminalError } from '../client/errors.js';
import type { Reconciler, Result } from './reconcile.js';
import { Runner } from './runner.js';
import { RateLimitingQueue } from '../workqueue/rate-limiting.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

async function value(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  const v = metric?.values.find((x) => Object.entries(labels).every(([k, l]) => x.labels[k] === l));
  return v?.value ?? 0;
}

function setup(reconcile: (key: string) => Promise<Result>, workers = 2) {
  const clock = new FakeClock();
  const registry = new Registry();
  const queue = new RateLimitingQueue({ name: 'c', clock });
  const calls: string[] = [];
  const reconciler: Reconciler = {
    reconcile: (key) => {
      calls.push(key);
      return reconcile(key);
    },
  };
  const runner = new Runner({ name: 'c', queue, reconciler, workers, logger: silentLogger(), clock, metrics: ControllerMetrics.for(registry) });
  const stop = new AbortController();
  const done = runner.run(stop.signal);
  return { clock, registry, queue, calls, stop, done };
}

describe('Runner error classes', () => {
  it('requeues a conflict with backoff without counting an error', async () => {
    const t = setup(async () => {
      throw new ApiException(409, 'Conflict', {}, {});
    });
    t.queue.add('k');
    await tick();
    expect(t.queue.numRequeues('k')).toBe(1);
    expect(await value(t.registry, 'controller_runtime_reconcile_total', { result: 'requeue' })).toBe(1);
    expect(await value(t.registry, 'controller_runtime_reconcile_errors_total', {})).toBe(0);
    t.clock.advance(200);
    await tick();
    expect(t.calls).toEqual(['k', 'k']);
    t.stop.abort();
    await t.done;
  });

  it('treats not-found as done', async () => {
    const t = setup(async () => {
      throw new ApiException(404, 'NotFound', {}, {});
    });
    t.queue.add('k');
    await tick();
    t.clock.advance(10_000);
    await tick();
    expect(t.calls).toEqual(['k']);
    expect(await value(t.registry, 'controller_runtime_reconcile_total', { result: 'success' })).toBe(1);
    t.stop.abort();
    await t.done;
  });

  it('counts a TerminalError and does not retry it', async () => {
    const t = setup(async () => {
      throw new TerminalError('bad spec');
    });
    t.queue.add('k');
    await tick();
    t.clock.advance(10_000);
    await tick();
    expect(t.calls).toEqual(['k']);
    expect(await value(t.registry, 'controller_runtime_reconcile_errors_total', {})).toBe(1);
    expect(await value(t.registry, 'controller_runtime_terminal_reconcile_errors_total', {})).toBe(1);
    t.stop.abort();
    await t.done;
  });

  it('retries other errors with the 200 ms × 2^n backoff and forgets after success', async () => {
    let failures = 2;
    const t = setup(async () => {
      if (failures-- > 0) throw new Error('transient');
      return 'done';
    });
    t.queue.add('k');
    await tick();
    t.clock.advance(199);
    await tick();
    expect(t.calls).toHaveLength(1);
    t.clock.advance(1);
    await tick();
    expect(t.calls).toHaveLength(2);
    t.clock.advance(399);
    await tick();
    expect(t.calls).toHaveLength(2);
    t.clock.advance(1);
    await tick();
    expect(t.calls).toHaveLength(3);
    expect(t.queue.numRequeues('k')).toBe(0);
    expect(await value(t.registry, 'controller_runtime_reconcile_errors_total', {})).toBe(2);
    t.stop.abort();
    await t.done;
  });

  it('requeues after the requested delay', async () => {
    let n = 0;
    const t = setup(async () => (n++ === 0 ? { requeueAfter: 5000 } : 'done'));
    t.queue.add('k');
    await tick();
    t.clock.advance(4999);
    await tick();
    expect(t.calls).toHaveLength(1);
    t.clock.advance(1);
    await tick();
    expect(t.calls).toHaveLength(2);
    expect(await value(t.registry, 'controller_runtime_reconcile_total', { result: 'requeue_after' })).toBe(1);
    t.stop.abort();
    await t.done;
  });
});

describe('Runner concurrency and shutdown', () => {
  it('runs at most N reconciles at once and never one key twice concurrently', async () => {
    const release: (() => void)[] = [];
    const active = new Set<string>();
    let maxActive = 0;
    let overlap = false;
    const t = setup(async (key) => {
      if (active.has(key)) overlap = true;
      active.add(key);
      maxActive = Math.max(maxActive, active.size);
      await new Promise<void>((r) => release.push(r));
      active.delete(key);
      return 'done';
    }, 2);
    for (const k of ['a', 'b', 'c']) t.queue.add(k);
    await tick();
    t.queue.add('a'); // while 'a' is processing
    await tick();
    expect(active.size).toBe(2);
    expect(await value(t.registry, 'controller_runtime_active_workers', {})).toBe(2);
    while (release.length) {
      release.shift()?.();
      await tick();
      await tick();
    }
    expect(t.calls.sort()).toEqual(['a', 'a', 'b', 'c']);
    expect(maxActive).toBe(2);
    expect(overlap).toBe(false);
    t.stop.abort();
    await t.done;
  });

  it('on abort stops taking keys and waits for in-flight reconciles', async () => {
    let finish: () => void = () => {};
    let finished = false;
    const t = setup(async () => {
      await new Promise<void>((r) => (finish = r));
      finished = true;
      return 'done';
    }, 1);
    t.queue.add('a');
    t.queue.add('b');
    await tick();
    t.stop.abort();
    let stopped = false;
    void t.done.then(() => (stopped = true));
    await tick();
    expect(stopped).toBe(false);
    finish();
    await t.done;
    expect(finished).toBe(true);
    expect(t.calls).toEqual(['a']);
  });
});
