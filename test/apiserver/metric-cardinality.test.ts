/**
 * Issue #24, reproduction 4: nobody grows /metrics. Anonymous requests (401) and authenticated ones
 * to unknown groups, versions, resources, subresources and paths (404) are labelled by verb alone,
 * as upstream labels only installed routes: after one of each kind, 2,000 anonymous and 500
 * authenticated junk requests, each to a URL of its own, leave the number of apiserver_* series as
 * it was.
 */
import https from 'node:https';
import { presenting, raw, type Credential } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** The apiserver_* sample lines of a scrape (one per series), without their values. */
async function apiserverSeries(server: TestServer): Promise<string[]> {
  const res = await raw(server, 'GET', '/metrics');
  expect(res.status).toBe(200);
  return res.text
    .split('\n')
    .filter((l) => l.startsWith('apiserver_'))
    .map((l) => l.slice(0, l.lastIndexOf(' ')));
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The i-th junk URL: each names a group, version, resource, subresource or path nobody installed. */
function junkPath(i: number): string {
  switch (i % 6) {
    case 0:
      return `/apis/evil${i}.example.com/v1/things${i}`;
    case 1:
      return `/api/v1/namespaces/ns${i}/things${i}/x`;
    case 2:
      return `/apis/certificates.k8s.io/v${i}/certificatesigningrequests`;
    case 3:
      return `/api/v1/namespaces/default/configmaps/cm${i}/sub${i}`;
    case 4:
      return `/random/${i}/path`;
    default:
      return `/apis/evil.example.com/v${i}/namespaces/default/things/t${i}/status`;
  }
}

/** Sends `count` requests over a few kept-alive connections; returns how many got each status. */
async function flood(server: TestServer, count: number, admin: Credential | undefined, offset: number): Promise<Map<number, number>> {
  const who = admin ? presenting(admin) : { headers: {}, tls: {} };
  const agent = new https.Agent({ keepAlive: true, maxSockets: 16, ca: server.caPem, ...who.tls });
  const statuses = new Map<number, number>();
  const one = (i: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const method = METHODS[i % METHODS.length]!;
      const headers: Record<string, string> = { ...who.headers };
      if (method !== 'GET' && method !== 'DELETE') Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': '2' });
      const req = https.request(new URL(junkPath(i), server.url), { method, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
          resolve();
        });
      });
      req.on('error', reject);
      req.end(method !== 'GET' && method !== 'DELETE' ? '{}' : undefined);
    });
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await one(offset + next++);
  };
  try {
    await Promise.all(Array.from({ length: 16 }, worker));
  } finally {
    agent.destroy();
  }
  return statuses;
}

describe('apiserver_* series cardinality', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ storage: 'memory' });
  });
  afterAll(() => server.close());

  it('stays the same after 2,000 anonymous and 500 authenticated junk requests', async () => {
    // One of each method and kind first: the verb-only series they create are bounded and made here.
    await flood(server, 60, undefined, 0);
    await flood(server, 60, server.admin, 0);
    await apiserverSeries(server); // the scrape's own series (GET, 200) appear once it has ended
    const before = await apiserverSeries(server);

    // A label taken from the URL would add series by the hundred here: issue #24's 25,000 show no more.
    const anonymous = await flood(server, 2_000, undefined, 1_000);
    const authenticated = await flood(server, 500, server.admin, 100_000);
    expect([...anonymous]).toEqual([[401, 2_000]]);
    // Unknown everything is 404; the rest are the methods an installed route does not serve.
    expect(authenticated.get(404)).toBeGreaterThan(400);
    expect([...authenticated.keys()].every((code) => code === 404 || code === 405)).toBe(true);

    const after = await apiserverSeries(server);
    expect(after.filter((s) => !before.includes(s))).toEqual([]);
    expect(after.length).toBe(before.length);
    expect(after.filter((s) => /evil|things|random|sub\d/.test(s))).toEqual([]);
  }, 60_000);

  it('labels an installed resource by its route: an unknown subresource is not a label', async () => {
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps/nope/bogus')).status).toBe(404);
    const series = await apiserverSeries(server);
    expect(series.some((s) => s.includes('subresource="bogus"'))).toBe(false);
    expect(series.some((s) => s.startsWith('apiserver_request_total{') && s.includes('resource="configmaps"'))).toBe(true);
  });
});
