/** What the dashboard picture (bench/dashboard.ts) does as Grafana would: variables, legends, units, axis ticks. */
import { niceTicks } from '../../bench/lib/dashboard-svg.js';
import { formatValue, grafanaExpr, legend } from '../../bench/lib/grafana.js';

it('substitutes the job variable and the rate window as Grafana does before sending a query', () => {
  expect(grafanaExpr('sum(rate(x_total{job=~"$job"}[$__rate_interval])) / sum(rate(y_total{job=~"$job"}[$__rate_interval]))', { job: 'kid', rateInterval: '15s' })).toBe(
    'sum(rate(x_total{job=~"kid"}[15s])) / sum(rate(y_total{job=~"kid"}[15s]))',
  );
});

it("names a series by the target's legendFormat, an unknown label left empty", () => {
  expect(legend('{{decision}} {{ signer }}', { decision: 'issued', signer: 'kubernetes.io/kubelet-serving' })).toBe('issued kubernetes.io/kubelet-serving');
  expect(legend('p99 {{verb}}', {})).toBe('p99');
  expect(legend(undefined, { name: 'a' })).toBe('{"name":"a"}');
});

it("formats values in the dashboard's units as Grafana shows them", () => {
  expect(formatValue(4, 'reqps')).toBe('4 req/s');
  expect(formatValue(0.125, 'reqps')).toBe('0.125 req/s');
  expect(formatValue(1500, 'short')).toBe('1.5 K');
  expect(formatValue(0.25, 's')).toBe('250 ms');
  expect(formatValue(0.0000125, 's')).toBe('13 µs');
  expect(formatValue(200, 's')).toBe('3.3 min');
  expect(formatValue(10 * 365 * 86400 - 3600, 'dtdurations')).toBe('9 years, 364 days');
  expect(formatValue(86400 + 120, 'dtdurations')).toBe('1 day, 2 minutes');
  expect(formatValue(Number.NaN, 's')).toBe('NaN');
});

it('puts the y axis ticks at round values from 0 to at least the largest value', () => {
  expect(niceTicks(4.1)).toEqual([0, 2, 4, 6]);
  expect(niceTicks(0.13)).toEqual([0, 0.05, 0.1, 0.15]);
  expect(niceTicks(0)).toEqual([0, 0.5, 1]);
  expect(niceTicks(800)).toEqual([0, 200, 400, 600, 800]);
});
