/**
 * NodeRestriction alone, for the rule the default chain's ServiceAccount plugin answers first: a
 * node's mirror pod naming a ServiceAccount is refused by NodeRestriction too (upstream's order and
 * texts; the other rules are tested through the server in test/auth/mirror-pods.test.ts).
 */
import type { Pod } from '../../api/pods.js';
import { ApiError } from '../http/errors.js';
import { podStrategy } from '../registry/core/pod.js';
import type { RequestContext } from '../registry/generic/strategy.js';
import { allowAllAuthorizer } from '../../../test/helpers/static-auth.js';
import { admissionChain } from './chain.js';

const nodeRestriction = admissionChain(['NodeRestriction']);
const NODE = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', uid: 'node-a-uid' } };

const ctx: RequestContext = {
  user: { username: 'system:node:node-a', groups: ['system:nodes', 'system:authenticated'] },
  now: new Date(),
  dryRun: false,
  authorizer: allowAllAuthorizer,
  objects: { get: async (_r, _ns, name) => (name === 'node-a' ? NODE : undefined), list: async () => [] } as RequestContext['objects'],
  warnings: [],
};

const mirror = (spec: Record<string, unknown>): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'static',
    namespace: 'default',
    annotations: { 'kubernetes.io/config.mirror': 'hash' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'node-a-uid', controller: true }],
  },
  spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }], ...spec },
});

const admit = async (pod: Pod): Promise<string> => {
  try {
    await nodeRestriction.validate({ operation: 'CREATE', info: podStrategy.info, subresource: '', namespace: 'default', name: 'static', object: pod, oldObject: undefined, ctx });
    return 'admitted';
  } catch (err) {
    if (err instanceof ApiError) return `${err.code} ${err.message}`;
    throw err;
  }
};

it('refuses a node\'s mirror pod that names a ServiceAccount, before its Secrets', async () => {
  expect(await admit(mirror({}))).toBe('admitted');
  const refused = '403 pods "static" is forbidden: node "node-a" can not create pods that reference a service account';
  expect(await admit(mirror({ serviceAccountName: 'default', imagePullSecrets: [{ name: 'pull' }] }))).toBe(refused);
  expect(await admit(mirror({ serviceAccount: 'default' }))).toBe(refused);
});
