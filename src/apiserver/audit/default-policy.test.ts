import type { UserInfo } from '../../api/meta.js';
import { KUBE_IDENTITY_CONTROLLER_USER } from '../authorization/rbac/default-policy.js';
import { defaultPolicy } from './default-policy.js';
import { type AuditAttributes, PolicyChecker } from './policy.js';

const checker = new PolicyChecker(defaultPolicy());
const node: UserInfo = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const admin: UserInfo = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };
const controller: UserInfo = { username: KUBE_IDENTITY_CONTROLLER_USER, groups: ['system:authenticated'] };

function level(user: UserInfo, verb: string, group: string, resource: string, extra: Partial<AuditAttributes> = {}): string {
  return checker.evaluate({ user, verb, isResourceRequest: true, path: '', apiGroup: group, resource, ...extra }).level;
}
const lease = { namespace: 'kube-node-lease', name: 'n1' };
const csr = (subresource?: string): Partial<AuditAttributes> => ({ name: 'csr-1', ...(subresource ? { subresource } : {}) });
const nonResource = (p: string, user = admin): string => checker.evaluate({ user, verb: 'get', isResourceRequest: false, path: p, apiGroup: '', resource: '' }).level;

describe("up's default audit policy", () => {
  it("drops a node's heartbeat and reads of its own Node, keeps its join and every other write", () => {
    for (const verb of ['get', 'update', 'patch']) expect(level(node, verb, 'coordination.k8s.io', 'leases', lease)).toBe('None');
    expect(level(node, 'create', 'coordination.k8s.io', 'leases', lease)).toBe('Metadata');
    expect(level(node, 'delete', 'coordination.k8s.io', 'leases', lease)).toBe('Metadata');
    expect(level(node, 'get', '', 'nodes', { name: 'n1' })).toBe('None');
    expect(level(node, 'get', '', 'nodes', { name: 'n1', subresource: 'status' })).toBe('None');
    expect(level(node, 'patch', '', 'nodes', { name: 'n1', subresource: 'status' })).toBe('Metadata');
    expect(level(node, 'list', '', 'nodes')).toBe('Metadata');
    // Only a node's own namespace of heartbeats, and only for nodes: anyone else's Lease writes stay.
    expect(level(node, 'update', 'coordination.k8s.io', 'leases', { namespace: 'kube-system', name: 'n1' })).toBe('Metadata');
    expect(level(admin, 'update', 'coordination.k8s.io', 'leases', lease)).toBe('Metadata');
    // A node's certificate requests and reads of credentials are recorded as anyone's.
    expect(level(node, 'create', 'certificates.k8s.io', 'certificatesigningrequests', csr())).toBe('RequestResponse');
    expect(level(node, 'get', '', 'secrets', { namespace: 'default', name: 's' })).toBe('Metadata');
  });

  it("drops the controller's leader-election renewals, not its taking the Lease or any other write", () => {
    const held = { namespace: 'kube-system', name: 'kube-identity-controller' };
    for (const verb of ['get', 'update']) expect(level(controller, verb, 'coordination.k8s.io', 'leases', held)).toBe('None');
    expect(level(controller, 'create', 'coordination.k8s.io', 'leases', held)).toBe('Metadata');
    expect(level(admin, 'update', 'coordination.k8s.io', 'leases', held)).toBe('Metadata');
    expect(level(controller, 'update', 'certificates.k8s.io', 'certificatesigningrequests', csr('approval'))).toBe('RequestResponse');
  });

  it('drops Events and the version, keeps discovery and metrics', () => {
    expect(level(controller, 'create', '', 'events', { namespace: 'default' })).toBe('None');
    expect(level(controller, 'patch', 'events.k8s.io', 'events', { namespace: 'default' })).toBe('None');
    expect(nonResource('/version')).toBe('None');
    expect(nonResource('/api')).toBe('Metadata');
    expect(nonResource('/metrics')).toBe('Metadata');
  });

  it('records credentials at Metadata only, whatever the verb or user', () => {
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']) {
      expect(level(admin, verb, '', 'secrets', { namespace: 'default' })).toBe('Metadata');
      expect(level(node, verb, '', 'configmaps', { namespace: 'default' })).toBe('Metadata');
    }
    expect(level(admin, 'create', '', 'serviceaccounts', { namespace: 'default', name: 'sa', subresource: 'token' })).toBe('Metadata');
    expect(level(node, 'create', '', 'serviceaccounts', { namespace: 'default', name: 'sa', subresource: 'token' })).toBe('Metadata');
    expect(level(admin, 'create', 'authentication.k8s.io', 'tokenreviews')).toBe('Metadata');
  });

  it('records every write to an identity object with its bodies, and reads of them at Metadata', () => {
    const writes = ['create', 'update', 'patch', 'delete', 'deletecollection'];
    const identity: [string, string, Partial<AuditAttributes>][] = [
      ['certificates.k8s.io', 'certificatesigningrequests', csr()],
      ['certificates.k8s.io', 'certificatesigningrequests', csr('approval')],
      ['certificates.k8s.io', 'certificatesigningrequests', csr('status')],
      ['certificates.k8s.io', 'clustertrustbundles', { name: 'b' }],
      ['certificates.k8s.io', 'podcertificaterequests', { namespace: 'default', name: 'p' }],
      ['certificates.k8s.io', 'podcertificaterequests', { namespace: 'default', name: 'p', subresource: 'status' }],
      ['', 'serviceaccounts', { namespace: 'default', name: 'sa' }],
      ['rbac.authorization.k8s.io', 'roles', { namespace: 'default' }],
      ['rbac.authorization.k8s.io', 'rolebindings', { namespace: 'default' }],
      ['rbac.authorization.k8s.io', 'clusterroles', {}],
      ['rbac.authorization.k8s.io', 'clusterrolebindings', {}],
    ];
    for (const [group, resource, extra] of identity) {
      for (const verb of writes) expect([group, resource, extra.subresource, verb, level(admin, verb, group, resource, extra)]).toEqual([group, resource, extra.subresource, verb, 'RequestResponse']);
      for (const verb of ['get', 'list', 'watch']) expect(level(admin, verb, group, resource, extra)).toBe('Metadata');
    }
  });

  it('records what no rule names at Metadata', () => {
    expect(level(admin, 'create', '', 'pods', { namespace: 'default' })).toBe('Metadata');
    expect(level(admin, 'create', 'authorization.k8s.io', 'subjectaccessreviews')).toBe('Metadata');
    expect(level({ username: 'system:anonymous', groups: ['system:unauthenticated'] }, 'get', '', 'namespaces')).toBe('Metadata');
  });
});
