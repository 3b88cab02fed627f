/**
 * The keys each built-in Secret type requires, as upstream's ValidateSecret: a 422 naming the missing
 * key (or the docker config that is no JSON object), the same on update; other types take anything.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor } from '../kubectl/kubectl.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const b64 = (text: string): string => Buffer.from(text).toString('base64');
const path = '/api/v1/namespaces/default/secrets';
let n = 0;
const create = (type: string, data: Record<string, string>): ReturnType<typeof raw> =>
  raw(s, 'POST', path, { body: { metadata: { name: `typed-${n++}` }, type, data } });

describe('a Secret of a built-in type', () => {
  it.each([
    ['kubernetes.io/tls', {}, 'data[tls.crt]: Required value, data[tls.key]: Required value'],
    ['kubernetes.io/tls', { 'tls.crt': b64('c') }, 'data[tls.key]: Required value'],
    ['kubernetes.io/basic-auth', { token: b64('t') }, 'data[username]: Required value, data[password]: Required value'],
    ['kubernetes.io/ssh-auth', { 'ssh-privatekey': '' }, 'data[ssh-privatekey]: Required value'],
    ['kubernetes.io/dockerconfigjson', {}, 'data[.dockerconfigjson]: Required value'],
    ['kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('{"auths":') }, 'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": unexpected end of JSON input'],
    ['kubernetes.io/dockercfg', { '.dockercfg': b64('[1]') }, 'data[.dockercfg]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}'],
    ['kubernetes.io/service-account-token', {}, 'metadata.annotations[kubernetes.io/service-account.name]: Required value'],
  ])('%s without what it requires (%j) is a 422', async (type, data, causes) => {
    const res = await create(type, data);
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    expect(String(res.json.message)).toMatch(new RegExp(`^Secret "typed-\\d+" is invalid: \\[?${causes.replace(/[[\]{}().*+?^$|\\]/g, '\\$&')}\\]?$`));
  });

  it.each([
    ['kubernetes.io/tls', { 'tls.crt': '', 'tls.key': '' }],
    ['kubernetes.io/basic-auth', { password: '' }],
    ['kubernetes.io/ssh-auth', { 'ssh-privatekey': b64('k') }],
    ['kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('{"auths":{}}') }],
    ['kubernetes.io/dockercfg', { '.dockercfg': b64('null') }],
    ['example.com/anything', {}],
    ['Opaque', {}],
  ])('%s with %j is created', async (type, data) => {
    expect((await create(type, data)).status).toBe(201);
  });

  it('keeps its keys on update, and kubectl create secret docker-registry makes a valid one', async () => {
    const res = await create('kubernetes.io/tls', { 'tls.crt': b64('c'), 'tls.key': b64('k') });
    const name = String(res.json.metadata.name);
    const update = await raw(s, 'PUT', `${path}/${name}`, { body: { ...res.json, data: { 'tls.crt': b64('c') } } });
    expect([update.status, update.json.message]).toEqual([422, `Secret "${name}" is invalid: data[tls.key]: Required value`]);
    const kubectl = kubectlFor(s);
    expect((await kubectl('create', 'secret', 'docker-registry', 'regcred', '--docker-server=r.example', '--docker-username=u', '--docker-password=p')).code).toBe(0);
  });
});
