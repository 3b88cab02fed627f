import { Registry } from 'prom-client';
import { parseEncryptionConfig } from './config.js';
import { identityProvider, keyedProvider } from './providers.js';
import { ResourceTransformers, TransformationMetrics } from './transformers.js';

/** The shape of the example in Kubernetes' "Encrypting Confidential Data at Rest" page. */
const DOCUMENTED = `
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources:
      - secrets
      - configmaps
      - pandas.awesome.bears.example
    providers:
      - identity: {}
      - aesgcm:
          keys:
            - name: key1
              secret: c2VjcmV0IGlzIHNlY3VyZQ==
            - name: key2
              secret: dGhpcyBpcyBwYXNzd29yZA==
      - aescbc:
          keys:
            - name: key1
              secret: c2VjcmV0IGlzIHNlY3VyZQ==
      - secretbox:
          keys:
            - name: key1
              secret: YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=
  - resources:
      - events
    providers:
      - identity: {}
  - resources:
      - '*.apps'
    providers:
      - aescbc:
          keys:
            - name: key2
              secret: YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=
  - resources:
      - '*.*'
    providers:
      - kms:
          apiVersion: v2
          name: myKmsPlugin
          endpoint: unix:///tmp/socketfile.sock
          timeout: 3s
`;

describe('EncryptionConfiguration', () => {
  it('loads the documented example with its wildcards', () => {
    const config = parseEncryptionConfig(DOCUMENTED);
    expect(config.rules.map((r) => r.resources)).toEqual([
      [
        { group: '', resource: 'secrets' },
        { group: '', resource: 'configmaps' },
        { group: 'awesome.bears.example', resource: 'pandas' },
      ],
      [{ group: '', resource: 'events' }],
      [{ group: 'apps', resource: '*' }],
      [{ group: '*', resource: '*' }],
    ]);
    expect(config.rules[0]!.providers.map((p) => p.type)).toEqual(['identity', 'aesgcm', 'aescbc', 'secretbox']);
    expect(config.rules[3]!.providers[0]).toEqual({ type: 'kms', kms: { name: 'myKmsPlugin', endpoint: 'unix:///tmp/socketfile.sock', timeoutMs: 3000 } });
  });

  it('lists every problem with its field path, never a key', () => {
    const bad = `
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [Secrets, '*', secrets.events.k8s.io, 'deployments.*']
    providers:
      - aescbc:
          keys:
            - name: k
              secret: c2hvcnQ=
      - aesgcm: { keys: [{ name: k, secret: c2hvcnQ= }] }
        identity: {}
      - kms: { name: 'a:b', endpoint: 'tcp://x', apiVersion: v1 }
  - resources: [secrets, '*.']
    providers: []
`;
    let message = '';
    try {
      parseEncryptionConfig(bad);
    } catch (err) {
      message = (err as Error).message;
    }
    for (const expected of [
      'resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters',
      "resources[0].resources[1]: Invalid value: \"*\": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources",
      "Use 'events' instead in the config file",
      'encrypting the same resource across groups is not supported',
      'resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of [16 24 32]',
      'resources[0].providers[1]: Invalid value: more than one provider specified in a single element',
      "must not contain ':'",
      'only unix is supported',
      'only KMS apiVersion v2 is supported',
      'resources[1].resources: Invalid value: using overlapping resources',
      'resources[1].providers: Required value',
    ]) {
      expect(message).toContain(expected);
    }
    expect(message).not.toContain('c2hvcnQ=');
  });

  it('matches a resource exactly, then *.group, then *.*, and refuses a rule masked by an earlier wildcard', () => {
    const providers = [identityProvider, keyedProvider('secretbox', [{ name: 'k', secret: Buffer.alloc(32) }])];
    const metrics = new TransformationMetrics(new Registry());
    const config = parseEncryptionConfig(DOCUMENTED.split("  - resources:\n      - '*.*'")[0]!);
    const transformers = new ResourceTransformers(config, (i) => [providers[i % 2]!], metrics);
    const chain = (key: string) => (transformers.forKey(key) as { providers: unknown[] } | undefined)?.providers[0];
    expect(chain('/registry/core/secrets/default/s')).toBe(identityProvider);
    expect(chain('/registry/core/events/default/e')).toBe(providers[1]);
    expect(chain('/registry/apps/deployments/default/d')).toBe(identityProvider);
    expect(chain('/registry/certificates.k8s.io/certificatesigningrequests/c')).toBeUndefined();
    const masked = parseEncryptionConfig(`
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - { resources: ['*.'], providers: [{ identity: {} }] }
  - { resources: [secrets], providers: [{ identity: {} }] }
`);
    expect(() => new ResourceTransformers(masked, () => [identityProvider], metrics)).toThrow('resource "secrets" is masked by earlier rule "*."');
  });
});
