/**
 * The kubelet serving approver against the real server and the real controller, one test per rule:
 * real PKCS#10 requests from node identities (token-file users system:node:NAME in system:nodes),
 * real Node objects with status.addresses, and what ends up on the CSR, in Events and in metrics.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import type { CertificateSigningRequest } from '../../src/api/certificates.js';
import type { ConfigKey } from '../../src/config/schema.js';
import { createCertificateRequestPem, type CreateCsrOptions } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import type { RegisterDeps } from '../../src/controller/register.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { getCsr, startController, startHarness, waitFor, type Harness, type RunningController } from './harness.js';

const SERVING = 'kubernetes.io/kubelet-serving';
const SERVING_USAGES = ['digital signature', 'server auth'];
const NODES = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7', 'kubernetes'];
const tokenOf = (node: string): string => `serving-${node}-token`;
const EXTRA_TOKENS = NODES.map((n) => `${tokenOf(n)},system:node:${n},uid-${n},"system:nodes,system:authenticated"`);

interface Ask {
  as: string | 'alice';
  cn?: string;
  org?: string[];
  dns?: string[];
  ips?: string[];
  emails?: string[];
  usages?: string[];
}

let h: Harness;
let seq = 0;

async function submit(ask: Ask): Promise<string> {
  const name = `serving-${++seq}`;
  const { privateKeyPem } = generateKeyPair('ECDSA-P256');
  const opts: CreateCsrOptions = {
    privateKeyPem,
    commonName: ask.cn ?? `system:node:${ask.as}`,
    organizations: ask.org ?? ['system:nodes'],
    dnsNames: ask.dns,
    ipAddresses: ask.ips,
    emailAddresses: ask.emails,
  };
  const pem = await createCertificateRequestPem(opts);
  const who = ask.as === 'alice' ? 'alice' : { token: tokenOf(ask.as) };
  const res = await h.call(who, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
    metadata: { name },
    spec: { request: Buffer.from(pem).toString('base64'), signerName: SERVING, usages: ask.usages ?? SERVING_USAGES },
  });
  if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return name;
}

async function registerNode(name: string, addresses: { type?: string; address?: string }[]): Promise<void> {
  const res = await h.call({ token: tokenOf(name) }, 'POST', '/api/v1/nodes', { metadata: { name }, status: { addresses } });
  if (res.status !== 201) throw new Error(`node ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  // Node status is written through /status, as a kubelet does after registering.
  const st = await h.call({ token: tokenOf(name) }, 'PUT', `/api/v1/nodes/${name}/status`, { ...res.body, status: { addresses } });
  if (st.status !== 200) throw new Error(`node ${name} status: ${st.status} ${JSON.stringify(st.body)}`);
}

const conditionsOf = (csr: CertificateSigningRequest): string[] => (csr.status?.conditions ?? []).map((c) => `${c.type}/${c.reason ?? ''}`);

async function eventsFor(ctl: RunningController, name: string): Promise<{ type?: string; reason?: string; message?: string }[]> {
  const list = await ctl.client.api(CoreV1Api).listNamespacedEvent({ namespace: 'default' });
  return list.items.filter((e) => e.involvedObject.name === name).map((e) => ({ type: e.type, reason: e.reason, message: e.message }));
}

async function waitForEvent(ctl: RunningController, name: string, reason: string): Promise<{ type?: string; reason?: string; message?: string }> {
  try {
    return await waitFor(`${reason} event on ${name}`, async () => (await eventsFor(ctl, name)).find((e) => e.reason === reason), 5000);
  } catch (err) {
    throw new Error(`${(err as Error).message}; events: ${JSON.stringify(await eventsFor(ctl, name))}; csr: ${JSON.stringify((await getCsr(h, name)).spec.username)}`, { cause: err });
  }
}

async function metric(ctl: RunningController, name: string): Promise<string> {
  return ctl.registry.getSingleMetricAsString(name);
}

// DNS resolution has its own suite below, with a DNS server the test controls.
const SERVING_FLAGS: Partial<Record<ConfigKey, unknown>> = { approveKubeletServing: 'true', kubeletServingBypassDnsResolution: 'true' };
const SIGNING = (): Partial<Record<ConfigKey, unknown>> => ({ clusterSigningCertFile: h.caFiles.certFile, clusterSigningKeyFile: h.caFiles.keyFile });

/**
 * Runs `fn` with a fresh controller, then deletes the CSRs it made: each case starts from no
 * pending CSRs, and its Events are its own (the broadcaster folds more than 10 similar Events about
 * different CSRs into one combined Event, as client-go's aggregator does).
 */
async function withController(flags: Partial<Record<ConfigKey, unknown>>, fn: (ctl: RunningController) => Promise<void>, more: Pick<RegisterDeps, 'resolveHost'> = {}): Promise<void> {
  const ctl = await startController(h, { ...SERVING_FLAGS, ...flags }, more);
  const first = seq + 1;
  try {
    await fn(ctl);
  } finally {
    await ctl.stop();
    for (let i = first; i <= seq; i++) await h.call('admin', 'DELETE', `/apis/certificates.k8s.io/v1/certificatesigningrequests/serving-${i}`);
  }
}

const waitForDecision = (name: string): Promise<CertificateSigningRequest> =>
  waitFor(`decision on ${name}`, async () => {
    const c = await getCsr(h, name);
    return c.status?.conditions?.length ? c : undefined;
  });

beforeAll(async () => {
  h = await startHarness(EXTRA_TOKENS);
  await registerNode('w1', [
    { type: 'InternalIP', address: '10.0.0.1' },
    { type: 'InternalIP', address: 'fd00::1' },
    { type: 'Hostname', address: 'w1' },
    { type: 'InternalDNS', address: 'w1.cluster.example' },
  ]);
  await registerNode('w2', [{ type: 'InternalIP', address: '10.0.0.2' }, { type: 'Hostname', address: 'w2' }]);
  await registerNode('w3', [{ type: 'ExternalIP', address: '8.8.8.8' }, { type: 'Hostname', address: 'w3' }]);
  // Issue #24's node: a join token made it, and it claims the API server's names and Service IP.
  await registerNode('kubernetes', [
    { type: 'InternalIP', address: '10.0.0.20' },
    { type: 'InternalIP', address: '10.96.0.1' },
    { type: 'Hostname', address: 'kubernetes' },
    { type: 'InternalDNS', address: 'kubernetes.default.svc' },
    { type: 'InternalDNS', address: 'kubernetes.default.svc.cluster.local' },
  ]);
});
afterAll(async () => h?.close());

describe('serving approver: approve, and each refusal left pending', () => {
  it('approves a node asking for its own names and addresses, and the signer issues it', () =>
    withController(SIGNING(), async (ctl) => {
      const name = await submit({ as: 'w1', dns: ['w1', 'w1.cluster.example'], ips: ['10.0.0.1', 'fd00:0:0::1'] });
      const csr = await waitFor('issued', async () => {
        const c = await getCsr(h, name);
        return c.status?.certificate ? c : undefined;
      });
      expect(csr.status?.conditions?.[0]).toMatchObject({ type: 'Approved', reason: 'AutoApproved', message: 'Auto approving kubelet serving certificate after policy check.' });
      expect((await waitForEvent(ctl, name, 'AutoApproved')).type).toBe('Normal');
      expect(await metric(ctl, 'kube_identity_csr_approvals_total')).toMatch(/signer="kubernetes.io\/kubelet-serving",reason="kubelet-serving-policy"\} 1/);
    }));

  const refusals: [string, Ask, string, string][] = [
    ['an extra organization', { as: 'w1', org: ['system:nodes', 'system:masters'], dns: ['w1'] }, 'subject', 'subject must be exactly CN=system:node:w1'],
    ['another Node\'s IP', { as: 'w1', ips: ['10.0.0.2'] }, 'node-address', '"10.0.0.2" belongs to Node "w2"'],
    ['another Node\'s name as DNS SAN', { as: 'w1', dns: ['w1', 'w2'] }, 'dns-name', 'DNS name "w2" does not match'],
    ['an IP outside the allowed ranges', { as: 'w3', ips: ['8.8.8.8'] }, 'ip-range', 'IP address "8.8.8.8" is outside the allowed ranges'],
    ['loopback', { as: 'w1', ips: ['127.0.0.1'] }, 'reserved-ip', 'IP address "127.0.0.1" is loopback, link-local, unspecified, multicast or broadcast'],
    ['the cloud metadata address', { as: 'w1', ips: ['169.254.169.254'] }, 'reserved-ip', 'IP address "169.254.169.254" is loopback'],
    ['IPv6 unspecified', { as: 'w1', ips: ['::'] }, 'reserved-ip', 'IP address "::" is loopback'],
    ['the API server\'s name, from its own Node', { as: 'kubernetes', dns: ['kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'] }, 'apiserver-name', 'DNS name "kubernetes.default.svc" is the API server\'s in-cluster name'],
    ['the bare name kubernetes', { as: 'kubernetes', dns: ['kubernetes'] }, 'apiserver-name', 'DNS name "kubernetes" is the API server\'s in-cluster name'],
    ['kubernetes.default, upper case with a trailing dot', { as: 'kubernetes', dns: ['Kubernetes.Default.'] }, 'apiserver-name', 'DNS name "Kubernetes.Default." is the API server\'s in-cluster name'],
    ['a wildcard over the API server\'s name', { as: 'w1', dns: ['*.default.svc.cluster.local'] }, 'apiserver-name', 'DNS name "*.default.svc.cluster.local" is the API server\'s'],
    ['a Service name the DNS regex allows', { as: 'w1', dns: ['w1', 'w1.default.svc'] }, 'service-name', 'DNS name "w1.default.svc" is a Service name (*.svc, *.svc.cluster.local)'],
    ['a Service name under the cluster domain', { as: 'w1', dns: ['w1.kube-system.svc.cluster.local'] }, 'service-name', 'DNS name "w1.kube-system.svc.cluster.local" is a Service name'],
    ['the kubernetes Service IP, in its own Node\'s status', { as: 'kubernetes', ips: ['10.96.0.1'] }, 'service-ip', 'IP address "10.96.0.1" is inside the Service range'],
    ['another IP in the Service range', { as: 'w1', ips: ['10.0.0.1', '10.100.0.7'] }, 'service-ip', 'IP address "10.100.0.7" is inside the Service range'],
    ['an IP in range but not the Node\'s', { as: 'w1', ips: ['10.9.9.9'] }, 'node-address', '"10.9.9.9" is not among the status.addresses of Node "w1"'],
    ['an email SAN', { as: 'w1', dns: ['w1'], emails: ['root@w1'] }, 'san-type', 'Email subjectAltNames are not allowed'],
    ['no SAN at all', { as: 'w1' }, 'san-missing', 'DNS or IP subjectAltName is required'],
    ['client auth usage', { as: 'w1', dns: ['w1'], usages: ['digital signature', 'server auth', 'client auth'] }, 'usages', 'usages did not match [digital signature key encipherment server auth]'],
    ['a requester that is not a node', { as: 'alice', cn: 'system:node:w1', dns: ['w1'] }, 'requester', 'requester "alice" is not a node'],
  ];

  it('never sees a node ask in another node\'s name: NodeRestriction refuses it at create', async () => {
    await expect(submit({ as: 'w1', cn: 'system:node:w2', dns: ['w2'] })).rejects.toThrow('can only create a node CSR with CN=system:node:w1');
  });

  it.each(refusals)('leaves pending: %s', (_what, ask, rule, detail) =>
    withController({}, async (ctl) => {
      const name = await submit(ask);
      const event = await waitForEvent(ctl, name, 'PolicyViolation');
      expect(event.type).toBe('Warning');
      expect(event.message).toContain(`Left pending: kubelet serving policy: ${rule}: ${detail}`);
      expect(conditionsOf(await getCsr(h, name))).toEqual([]);
      expect(await metric(ctl, 'kube_identity_csr_policy_violations_total')).toMatch(new RegExp(`signer="kubernetes.io/kubelet-serving",rule="${rule}"\\} 1`));
    }));

  it('the kubernetes Service\'s IP is refused by its own rule, even outside the configured Service range', () =>
    withController({ serviceClusterIpRange: '10.200.0.0/16', kubeletServingAllowedIpRanges: '10.0.0.0/8' }, async (ctl) => {
      const name = await submit({ as: 'kubernetes', ips: ['10.0.0.20', '10.96.0.1'] });
      expect((await waitForEvent(ctl, name, 'PolicyViolation')).message).toBe(
        'Left pending: kubelet serving policy: apiserver-ip: IP address "10.96.0.1" belongs to the kubernetes Service or its Endpoints',
      );
      expect(conditionsOf(await getCsr(h, name))).toEqual([]);
    }));

  it('a missing Node makes the CSR wait, and it is approved once the Node registers', () =>
    withController({}, async (ctl) => {
      const name = await submit({ as: 'w4', dns: ['w4'], ips: ['10.0.0.4'] });
      expect((await waitForEvent(ctl, name, 'WaitingForNode')).message).toBe('Node "w4" is not registered yet; its status.addresses are needed');
      expect(conditionsOf(await getCsr(h, name))).toEqual([]);
      await registerNode('w4', [{ type: 'InternalIP', address: '10.0.0.4' }, { type: 'Hostname', address: 'w4' }]);
      expect(conditionsOf(await waitForDecision(name))).toEqual(['Approved/AutoApproved']);
    }));

  // The server stores an address without its fields (as kube-apiserver, which reads them as ""): the
  // policy passes over it instead of failing the CSR's sync on every retry.
  it('a Node whose status has an address without fields is still decided on its other addresses', () =>
    withController({}, async () => {
      await registerNode('w7', [{ type: 'Hostname' }, {}, { type: 'InternalIP', address: '10.0.0.7' }, { type: 'Hostname', address: 'w7' }]);
      const name = await submit({ as: 'w7', dns: ['w7'], ips: ['10.0.0.7'] });
      expect(conditionsOf(await waitForDecision(name))).toEqual(['Approved/AutoApproved']);
    }));

  it('a flood from one node: the oldest 3 are considered, the extras are left pending for good', () =>
    withController({ kubeletServingMaxPendingPerNode: '3' }, async (ctl) => {
      const names: string[] = [];
      for (let i = 0; i < 4; i++) names.push(await submit({ as: 'w5', dns: ['w5'] }));
      const extra = names[3] as string;
      expect((await waitForEvent(ctl, extra, 'PolicyViolation')).message).toContain('kubelet serving policy: max-pending: node "w5" has more than 3 pending serving CSRs');
      await registerNode('w5', [{ type: 'Hostname', address: 'w5' }]);
      for (const n of names.slice(0, 3)) expect(conditionsOf(await waitForDecision(n))).toEqual(['Approved/AutoApproved']);
      await new Promise((r) => setTimeout(r, 500));
      expect(conditionsOf(await getCsr(h, extra))).toEqual([]);
      expect(await metric(ctl, 'kube_identity_csr_policy_violations_total')).toMatch(/rule="max-pending"\} 1/);
    }));
});

describe('serving approver: dry run and deny', () => {
  it('dry run decides and records, and writes nothing', () =>
    withController({ kubeletServingDryRun: 'true', kubeletServingDeny: 'true' }, async (ctl) => {
      const good = await submit({ as: 'w6', dns: ['w6'] });
      const bad = await submit({ as: 'w2', ips: ['10.0.0.1'] });
      await registerNode('w6', [{ type: 'Hostname', address: 'w6' }]);
      const before = { [good]: await getCsr(h, good), [bad]: await getCsr(h, bad) };
      expect((await waitForEvent(ctl, good, 'DryRun')).message).toBe('Dry run: would approve: Auto approving kubelet serving certificate after policy check.');
      expect((await waitForEvent(ctl, bad, 'DryRun')).message).toBe('Dry run: would deny: kubelet serving policy: node-address: "10.0.0.1" belongs to Node "w1"');
      const decisions = await metric(ctl, 'kube_identity_csr_dry_run_decisions_total');
      expect(decisions).toMatch(/signer="kubernetes.io\/kubelet-serving",decision="approve",reason="kubelet-serving-policy"\} 1/);
      expect(decisions).toMatch(/decision="deny",reason="node-address"\} 1/);
      for (const [n, was] of Object.entries(before)) {
        const now = await getCsr(h, n);
        expect(now.metadata?.resourceVersion).toBe(was.metadata?.resourceVersion);
        expect(conditionsOf(now)).toEqual([]);
      }
      expect(await metric(ctl, 'kube_identity_csr_approvals_total')).not.toMatch(/kubelet-serving-policy/);
      expect(await metric(ctl, 'kube_identity_csr_denials_total')).not.toMatch(/kubelet-serving/);
    }));

  it('--kubelet-serving-deny denies with the rule in the message', () =>
    withController({ kubeletServingDeny: 'true' }, async (ctl) => {
      const name = await submit({ as: 'w6', dns: ['w6'], emails: ['x@w6'] });
      expect((await waitForDecision(name)).status?.conditions?.[0]).toMatchObject({
        type: 'Denied',
        reason: 'PolicyViolation',
        message: 'kubelet serving policy: san-type: Email subjectAltNames are not allowed',
      });
      expect(await metric(ctl, 'kube_identity_csr_denials_total')).toMatch(/signer="kubernetes.io\/kubelet-serving",reason="san-type"\} 1/);
    }));
});

describe('serving approver: DNS SANs must resolve to an IP of the Node', () => {
  let dns: DnsServer;
  beforeAll(async () => {
    dns = await startDnsServer({ w1: ['10.0.0.1', 'fd00::1'], 'w1.cluster.example': ['10.0.0.99'] });
  });
  afterAll(async () => dns?.close());
  const RESOLVING = { kubeletServingBypassDnsResolution: 'false' };

  it('approves when every DNS SAN resolves to one of the Node\'s IPs', () =>
    withController(RESOLVING, async () => {
      const name = await submit({ as: 'w1', dns: ['w1'], ips: ['10.0.0.1'] });
      expect(conditionsOf(await waitForDecision(name))).toEqual(['Approved/AutoApproved']);
    }, { resolveHost: (n) => dns.resolveHost(n) }));

  it('refuses a name that resolves elsewhere, and one that does not resolve', () =>
    withController(RESOLVING, async (ctl) => {
      const elsewhere = await submit({ as: 'w1', dns: ['w1', 'w1.cluster.example'] });
      expect((await waitForEvent(ctl, elsewhere, 'PolicyViolation')).message).toBe(
        'Left pending: kubelet serving policy: dns-resolution: DNS name "w1.cluster.example" resolves to 10.0.0.99, none of them an IP of Node "w1"',
      );
      dns.records.delete('w1');
      try {
        const unknown = await submit({ as: 'w1', dns: ['w1'] });
        expect((await waitForEvent(ctl, unknown, 'PolicyViolation')).message).toMatch(/^Left pending: kubelet serving policy: dns-resolution: DNS name "w1" does not resolve: .*ENOTFOUND/);
        expect(conditionsOf(await getCsr(h, unknown))).toEqual([]);
      } finally {
        dns.records.set('w1', ['10.0.0.1', 'fd00::1']);
      }
      expect(await metric(ctl, 'kube_identity_csr_policy_violations_total')).toMatch(/rule="dns-resolution"\} 2/);
    }, { resolveHost: (n) => dns.resolveHost(n) }));
});
