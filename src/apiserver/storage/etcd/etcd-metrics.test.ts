import { Registry } from 'prom-client';
import { EtcdMetrics, typeOf } from './etcd-metrics.js';

describe('etcd request metrics', () => {
  it.each([
    ['/registry/core/configmaps/ns/a', 'configmaps'],
    ['/registry/core/configmaps/', 'configmaps'],
    ['/registry/core/namespaces', 'namespaces'],
    ['/registry/certificates.k8s.io/certificatesigningrequests/csr-1', 'certificatesigningrequests.certificates.k8s.io'],
    ['/registry/core/', ''],
    ['/registry/core', ''],
    ['/registry//x/y', ''],
    ['/other/core/configmaps/a', ''],
    ['registry/core/configmaps/a', ''],
    ['', ''],
  ])('names the resource of %s as upstream: %s', (key, type) => {
    expect(typeOf(key)).toBe(type);
  });

  it('counts and times every call by operation and type, failed ones as errors too, whether they reject or throw', async () => {
    const registry = new Registry();
    const m = new EtcdMetrics(registry);
    expect(await m.measure('get', '/registry/core/configmaps/ns/a', () => Promise.resolve(7))).toBe(7);
    expect(await m.measure('get', '/registry/core/configmaps/ns/b', () => Promise.resolve(8))).toBe(8);
    await expect(m.measure('update', '/registry/core/secrets/ns/s', () => Promise.reject(new Error('lost')))).rejects.toThrow('lost');
    await expect(
      m.measure('create', '/registry/core/secrets/ns/s', () => {
        throw new Error('at once');
      }),
    ).rejects.toThrow('at once');
    const text = await registry.metrics();
    const line = (re: string): string | undefined => new RegExp(`^${re} (\\S+)$`, 'm').exec(text)?.[1];
    expect(line('etcd_requests_total\\{operation="get",type="configmaps"\\}')).toBe('2');
    expect(line('etcd_request_duration_seconds_count\\{operation="get",type="configmaps"\\}')).toBe('2');
    expect(line('etcd_request_duration_seconds_bucket\\{le="\\+Inf",operation="get",type="configmaps"\\}')).toBe('2');
    expect(line('etcd_request_duration_seconds_bucket\\{le="60",operation="get",type="configmaps"\\}')).toBe('2');
    expect(Number(line('etcd_request_duration_seconds_sum\\{operation="get",type="configmaps"\\}'))).toBeGreaterThanOrEqual(0);
    for (const operation of ['update', 'create']) {
      expect(line(`etcd_requests_total\\{operation="${operation}",type="secrets"\\}`)).toBe('1');
      expect(line(`etcd_request_errors_total\\{operation="${operation}",type="secrets"\\}`)).toBe('1');
      expect(line(`etcd_request_duration_seconds_count\\{operation="${operation}",type="secrets"\\}`)).toBe('1');
    }
    expect(text).not.toMatch(/^etcd_request_errors_total\{operation="get"/m);
    // A later scrape adds only what came since.
    await m.measure('get', '/registry/core/configmaps/ns/a', () => Promise.resolve(9));
    expect(new RegExp('^etcd_requests_total\\{operation="get",type="configmaps"\\} 3$', 'm').test(await registry.metrics())).toBe(true);
  });
});
