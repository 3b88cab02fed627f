import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type AuditAttributes, PolicyChecker, PolicyError, parsePolicy } from './policy.js';

const DOCS_EXAMPLE = path.join(process.cwd(), 'test/audit/docs-example-policy.yaml');
const alice = { username: 'alice', groups: ['dev', 'system:authenticated'] };

function res(verb: string, resource: string, extra: Partial<AuditAttributes> = {}): AuditAttributes {
  return { user: alice, verb, isResourceRequest: true, path: '', apiGroup: '', resource, namespace: 'default', ...extra };
}
const nonRes = (p: string, user = alice): AuditAttributes => ({ user, verb: 'get', isResourceRequest: false, path: p, apiGroup: '', resource: '' });

describe('the documentation example policy', () => {
  const checker = new PolicyChecker(parsePolicy(readFileSync(DOCS_EXAMPLE, 'utf8')));
  const level = (a: AuditAttributes): string => checker.evaluate(a).level;

  it('gives each request the level of the first rule it matches', () => {
    expect(level(res('create', 'pods'))).toBe('RequestResponse');
    expect(level(res('get', 'pods', { subresource: 'log' }))).toBe('Metadata');
    expect(level(res('update', 'pods', { subresource: 'status' }))).toBe('Metadata');
    // pods/exec is neither `pods` nor listed: the core group's Request rule.
    expect(level(res('create', 'pods', { subresource: 'exec' }))).toBe('Request');
    expect(level(res('update', 'configmaps', { name: 'controller-leader', namespace: 'kube-system' }))).toBe('None');
    expect(level(res('update', 'configmaps', { name: 'other', namespace: 'kube-system' }))).toBe('Request');
    expect(level(res('update', 'configmaps', { name: 'other' }))).toBe('Metadata');
    expect(level(res('get', 'secrets', { name: 's' }))).toBe('Metadata');
    const proxy = { username: 'system:kube-proxy', groups: ['system:authenticated'] };
    expect(level(res('watch', 'services', { user: proxy }))).toBe('None');
    expect(level(res('list', 'services', { user: proxy }))).toBe('Request');
    expect(level(res('watch', 'services'))).toBe('Request');
    expect(level(nonRes('/apis/certificates.k8s.io/v1'))).toBe('None');
    expect(level(nonRes('/version'))).toBe('None');
    expect(level(nonRes('/version', { username: 'x', groups: [] }))).toBe('Metadata');
    expect(level(nonRes('/metrics'))).toBe('Metadata');
    expect(level(res('create', 'certificatesigningrequests', { apiGroup: 'certificates.k8s.io', namespace: undefined }))).toBe('Metadata');
    expect(level(res('get', 'deployments', { apiGroup: 'extensions' }))).toBe('Request');
  });

  it('omits RequestReceived from every rule, the policy-wide list joined with each rule\'s', () => {
    expect(checker.evaluate(res('create', 'pods')).omitStages).toEqual(['RequestReceived']);
    expect(checker.evaluate(nonRes('/metrics')).omitStages).toEqual(['RequestReceived']);
  });
});

describe('rule matching', () => {
  const policy = (rules: string): PolicyChecker => new PolicyChecker(parsePolicy(`apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n${rules}\n  - level: None\n`));

  it('matches `*`, `*/sub` and `res/*` forms and resourceNames', () => {
    const p = policy(`  - level: Request
    resources:
      - group: ""
        resources: ["*/status"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["serviceaccounts/*"]
  - level: Metadata
    resources:
      - group: "certificates.k8s.io"
        resources: ["*"]
        resourceNames: ["csr-1"]`);
    expect(p.evaluate(res('update', 'nodes', { subresource: 'status' })).level).toBe('Request');
    expect(p.evaluate(res('update', 'nodes')).level).toBe('None');
    expect(p.evaluate(res('create', 'serviceaccounts', { subresource: 'token' })).level).toBe('RequestResponse');
    expect(p.evaluate(res('get', 'serviceaccounts')).level).toBe('RequestResponse');
    const csr = { apiGroup: 'certificates.k8s.io', namespace: undefined };
    expect(p.evaluate(res('update', 'certificatesigningrequests', { ...csr, name: 'csr-1', subresource: 'approval' })).level).toBe('Metadata');
    expect(p.evaluate(res('update', 'certificatesigningrequests', { ...csr, name: 'csr-2' })).level).toBe('None');
  });

  it('matches cluster-scoped requests by the empty namespace and never mixes resource and non-resource rules', () => {
    const p = policy(`  - level: Metadata
    namespaces: [""]`);
    expect(p.evaluate(res('list', 'nodes', { namespace: undefined })).level).toBe('Metadata');
    expect(p.evaluate(res('list', 'configmaps')).level).toBe('None');
    expect(p.evaluate(nonRes('/healthz')).level).toBe('None');
  });

  it('takes a rule\'s omitManagedFields over the policy\'s', () => {
    const checker = new PolicyChecker(
      parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitManagedFields: true\nrules:\n  - level: Request\n    verbs: [create]\n    omitManagedFields: false\n  - level: Request\n'),
    );
    expect(checker.evaluate(res('create', 'pods')).omitManagedFields).toBe(false);
    expect(checker.evaluate(res('update', 'pods')).omitManagedFields).toBe(true);
  });
});

describe('invalid policies', () => {
  const refuse = (text: string): string => {
    try {
      parsePolicy(text);
    } catch (err) {
      expect(err).toBeInstanceOf(PolicyError);
      return (err as Error).message;
    }
    throw new Error('accepted');
  };
  const head = 'apiVersion: audit.k8s.io/v1\nkind: Policy\n';

  it('are refused with upstream\'s messages', () => {
    expect(refuse(`${head}rules: []\n`)).toBe('loaded illegal policy with 0 rules');
    expect(refuse('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]\n')).toMatch(/^unknown group version field audit.k8s.io\/v1beta1/);
    expect(refuse(`${head}rules:\n  - level: Everything\n`)).toBe(
      'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"',
    );
    expect(refuse(`${head}rules:\n  - verbs: [get]\n  - level: None\n    nonResourceURLs: ["healthz", "/a*b"]\n`)).toBe(
      `[rules[0].level: Required value, rules[1].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character, rules[1].nonResourceURLs[1]: Invalid value: "/a*b": non-resource URL wildcards '*' must be the final character of the rule]`,
    );
    expect(refuse(`${head}rules:\n  - level: None\n    nonResourceURLs: ["/x"]\n    namespaces: [a]\n`)).toMatch(/rules cannot apply to both regular resources and non-resource URLs/);
    expect(refuse(`${head}rules:\n  - level: None\n    resources: [{group: rbac.authorization.k8s.io/v1}]\n`)).toMatch(/^rules\[0\]\.resources\.group: Invalid value: "rbac.authorization.k8s.io\/v1"/);
    expect(refuse(`${head}rules:\n  - level: None\n    resources: [{resourceNames: [a]}]\n`)).toMatch(/using resourceNames requires at least one resource/);
    expect(refuse(`${head}omitStages: [Started]\nrules:\n  - level: None\n`)).toBe(
      'omitStages[0]: Invalid value: "Started": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
    );
    expect(refuse('rules: [\n')).toMatch(/^failed decoding: /);
  });
});
