import { raw } from '../helpers/http.js';
import { BAD_INPUT_CASES, seedBadInput } from './bad-input-cases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await seedBadInput(s);
});
afterAll(async () => {
  await s.close();
});

const SA = '/api/v1/namespaces/default/serviceaccounts';


describe('bad input is rejected with a Status and changes nothing', () => {
  it.each(BAD_INPUT_CASES)('%s', async (_name, method, path, opts, code, message) => {
    const before = s.store.currentRevision();
    const r = await raw(s, method, path, opts);
    expect(r.status).toBe(code);
    if (code >= 400) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code });
      if (typeof message === 'string') expect(r.json.message).toBe(message);
      else expect(r.json.message).toMatch(message);
    }
    expect(s.store.currentRevision()).toBe(before);
  });

  it('warns about duplicate fields by default and drops nothing else', async () => {
    const r = await raw(s, 'POST', SA, { body: '{"metadata":{"name":"warned","name":"warned"}}' });
    expect(r.status).toBe(201);
    expect(r.headers.warning).toBe('299 - "duplicate field \\"metadata.name\\""');
  });

  it('serves health endpoints without credentials', async () => {
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await raw(s, 'GET', p, { anonymous: true });
      expect(r.status).toBe(200);
      expect(r.text).toBe('ok');
    }
  });
});
