import { Registry } from 'prom-client';
import { FlowControlMetrics } from './metrics.js';

const sample = (text: string, name: string, labels: string): number => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');

describe('FlowControlMetrics', () => {
  it('shows what each (level, schema) dispatched, queued, executed and waited at every scrape', async () => {
    const registry = new Registry();
    const m = new FlowControlMetrics(registry);
    const workload = m.series('workload', 'global-default');
    expect(m.series('workload', 'global-default')).toBe(workload);
    const node = m.series('node-high', 'system-node-high');
    const wl = 'priority_level="workload",flow_schema="global-default"';
    let text = await registry.metrics();
    // A series shows at 0 from its first use, as prom-client's inc(labels, 0) and set(0) show it.
    expect(sample(text, 'apiserver_flowcontrol_dispatched_requests_total', wl)).toBe(0);
    expect(sample(text, 'apiserver_flowcontrol_current_executing_requests', wl)).toBe(0);
    expect(sample(text, 'apiserver_flowcontrol_current_inqueue_requests', wl)).toBe(0);
    expect(text).not.toMatch(/^apiserver_flowcontrol_request_wait_duration_seconds_count/m);

    workload.dispatched(0);
    workload.dispatched(0.03);
    workload.executing += 2;
    workload.inQueue++;
    node.dispatched(0);
    workload.rejected('queue-full', 0.3);
    text = await registry.metrics();
    expect(sample(text, 'apiserver_flowcontrol_dispatched_requests_total', wl)).toBe(2);
    expect(sample(text, 'apiserver_flowcontrol_dispatched_requests_total', 'priority_level="node-high",flow_schema="system-node-high"')).toBe(1);
    expect(sample(text, 'apiserver_flowcontrol_current_executing_requests', wl)).toBe(2);
    expect(sample(text, 'apiserver_flowcontrol_current_inqueue_requests', wl)).toBe(1);
    expect(sample(text, 'apiserver_flowcontrol_rejected_requests_total', `${wl},reason="queue-full"`)).toBe(1);
    const wait = 'apiserver_flowcontrol_request_wait_duration_seconds';
    expect(sample(text, `${wait}_bucket`, `le="0",${wl},execute="true"`)).toBe(1);
    expect(sample(text, `${wait}_bucket`, `le="0.05",${wl},execute="true"`)).toBe(2);
    expect(sample(text, `${wait}_count`, `${wl},execute="true"`)).toBe(2);
    expect(sample(text, `${wait}_sum`, `${wl},execute="true"`)).toBeCloseTo(0.03);
    expect(sample(text, `${wait}_bucket`, `le="0.2",${wl},execute="false"`)).toBe(0);
    expect(sample(text, `${wait}_bucket`, `le="0.5",${wl},execute="false"`)).toBe(1);

    workload.executing -= 2;
    workload.inQueue--;
    workload.dispatched(0);
    text = await registry.metrics();
    expect(sample(text, 'apiserver_flowcontrol_dispatched_requests_total', wl)).toBe(3);
    expect(sample(text, 'apiserver_flowcontrol_current_executing_requests', wl)).toBe(0);
    expect(sample(text, 'apiserver_flowcontrol_current_inqueue_requests', wl)).toBe(0);
  });
});
