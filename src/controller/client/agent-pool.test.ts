import http from 'node:http';
import https from 'node:https';
import { AgentPool } from './agent-pool.js';

describe('AgentPool', () => {
  it('hands out one keep-alive agent for equal TLS options', () => {
    const pool = new AgentPool();
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const first = pool.reuse(new https.Agent({ ca, servername: 'api' }));
    const second = pool.reuse(new https.Agent({ ca: Buffer.from(ca), servername: 'api' }));
    expect(second).toBe(first);
    expect(first).toBeInstanceOf(https.Agent);
    expect((first as https.Agent & { keepAlive: boolean }).keepAlive).toBe(true);
    expect((first as unknown as { options: { servername?: string } }).options.servername).toBe('api');
    pool.destroy();
  });

  it('starts a new agent when the TLS options change (a rotated client certificate)', () => {
    const pool = new AgentPool();
    const before = pool.reuse(new https.Agent({ cert: 'cert-1', key: 'key-1' }));
    const after = pool.reuse(new https.Agent({ cert: 'cert-2', key: 'key-1' }));
    expect(after).not.toBe(before);
    expect((after as unknown as { options: { cert?: string } }).options.cert).toBe('cert-2');
    expect(pool.reuse(new https.Agent({ cert: 'cert-2', key: 'key-1' }))).toBe(after);
    pool.destroy();
  });

  it('keeps plain http agents apart from https ones and passes other agents through', () => {
    const pool = new AgentPool();
    const secure = pool.reuse(new https.Agent({}));
    const plain = pool.reuse(new http.Agent({}));
    expect(plain).not.toBe(secure);
    expect(plain).toBeInstanceOf(http.Agent);
    class ProxyAgent extends https.Agent {}
    const proxy = new ProxyAgent({});
    expect(pool.reuse(proxy)).toBe(proxy);
    expect(pool.reuse(undefined)).toBeUndefined();
    pool.destroy();
  });
});
