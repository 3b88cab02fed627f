/**
 * client-go's REST client metrics, same names and labels:
 * - rest_client_requests_total{code,method,host}: code is the HTTP status, or `<error>` when no reply came
 * - rest_client_request_duration_seconds{verb,host}: latency until the response headers
 */
import type { Registry } from 'prom-client';
import { ScrapedCounter } from '../lib/scraped-counter.js';
import { ScrapedHistogram } from '../lib/scraped-histogram.js';
import { once } from './registry.js';

/** Every controller request records here: plain additions, handed to prom-client when scraped. */
export class RestClientMetrics {
  private readonly requests: ScrapedCounter<'code' | 'method' | 'host'>;
  private readonly duration: ScrapedHistogram<'verb' | 'host'>;

  private constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new ScrapedCounter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by status code, method, and host.',
      labelNames: ['code', 'method', 'host'],
      registers,
    });
    this.duration = new ScrapedHistogram({
      name: 'rest_client_request_duration_seconds',
      help: 'Request latency in seconds. Broken down by verb, and host.',
      labelNames: ['verb', 'host'],
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
      registers,
    });
  }

  static for(registry: Registry): RestClientMetrics {
    return once(registry, 'rest-client', () => new RestClientMetrics(registry));
  }

  observe(method: string, host: string, code: number | '<error>', seconds: number): void {
    const series = `${method} ${host}`;
    this.requests.inc(`${code} ${series}`, () => ({ code: String(code), method, host }));
    this.duration.observe(series, () => ({ verb: method, host }), seconds);
  }
}
