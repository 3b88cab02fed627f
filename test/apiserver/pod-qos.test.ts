/**
 * status.qosClass of a new pod, as upstream's pod strategy computes it (ComputePodQOS): from cpu and
 * memory requests and limits, per container (init containers included) or from the pod-level
 * resources; quantities compared by value, requests defaulted from limits first.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, type KubectlResult } from '../kubectl/kubectl.js';

let s: TestServer;
let kubectl: (...args: string[]) => Promise<KubectlResult>;
beforeAll(async () => {
  s = await startTestServer();
  kubectl = kubectlFor(s);
});
afterAll(() => s.close());

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };
const container = (name: string, resources?: Resources): object => ({ name, image: 'busybox', ...(resources && { resources }) });
const both = (cpu: string, memory: string): Record<string, string> => ({ cpu, memory });

const cases: [string, object, string][] = [
  ['nothing asked', { containers: [container('a')] }, 'BestEffort'],
  ['only other resources', { containers: [container('a', { requests: { 'ephemeral-storage': '1Gi' } })] }, 'BestEffort'],
  ['limits only (requests default to them)', { containers: [container('a', { limits: both('500m', '1Gi') })] }, 'Guaranteed'],
  ['equal by value, written apart', { containers: [container('a', { requests: both('0.5', '1073741824'), limits: both('500m', '1Gi') })] }, 'Guaranteed'],
  ['a request under its limit', { containers: [container('a', { requests: both('250m', '1Gi'), limits: both('500m', '1Gi') })] }, 'Burstable'],
  ['cpu without memory', { containers: [container('a', { limits: { cpu: '1' } })] }, 'Burstable'],
  ['one container guaranteed, one best effort', { containers: [container('a', { limits: both('1', '1Gi') }), container('b')] }, 'Burstable'],
  ['an init container guaranteed with it', { initContainers: [container('i', { limits: both('1', '1Gi') })], containers: [container('a', { limits: both('2', '2Gi') })] }, 'Guaranteed'],
  ['pod-level resources decide', { resources: { requests: both('1', '1Gi'), limits: both('1', '1Gi') }, containers: [container('a', { requests: { cpu: '100m' } })] }, 'Guaranteed'],
];

describe('status.qosClass on create', () => {
  it.each(cases)('%s', async (_name, spec, want) => {
    const name = `qos-${cases.findIndex((c) => c[1] === spec)}`;
    const res = await raw(s, 'POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name }, spec } });
    expect([res.status, res.json.status]).toEqual([201, { phase: 'Pending', qosClass: want }]);
  });

  it('is what kubectl reads and keeps through an update of the pod', async () => {
    const spec = { containers: [container('a', { limits: both('1', '1Gi') })] };
    expect((await raw(s, 'POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'qos-kubectl' }, spec } })).status).toBe(201);
    expect((await kubectl('label', 'pod', 'qos-kubectl', 'a=b')).code).toBe(0);
    const got = await kubectl('get', 'pod', 'qos-kubectl', '-o', 'jsonpath={.status.qosClass}');
    expect(got.stdout).toBe('Guaranteed');
  });
});
