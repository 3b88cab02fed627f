/**
 * The shared test server with the CSR strategy registered through `extraStrategies`, bearer tokens
 * for a few users, and an authorizer that passes every RBAC check but grants signer verbs
 * (approve/sign on certificates.k8s.io signers) per user only, so the CSR admission checks are
 * what the tests observe.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { UserInfo } from '../../src/api/meta.js';
import { csrStrategy } from '../../src/apiserver/registry/certificates/csr.js';
import type { Authorizer } from '../../src/apiserver/authorization/authorizer.js';
import { staticTokenAuthenticator } from '../helpers/static-auth.js';
import { raw, type RawOptions, type RawResponse } from '../helpers/http.js';
import { startTestServer, tokenKubeConfig } from '../helpers/server.js';

type UserName = 'admin' | 'alice' | 'approver' | 'signer';

const USERS: Record<UserName, { info: UserInfo; signerGrants: string[] }> = {
  admin: { info: { username: 'admin', groups: ['system:masters', 'system:authenticated'] }, signerGrants: ['approve *', 'sign *'] },
  alice: { info: { username: 'alice', uid: 'uid-alice', groups: ['devs', 'system:authenticated'] }, signerGrants: [] },
  approver: { info: { username: 'approver', groups: ['system:authenticated'] }, signerGrants: ['approve example.com/*'] },
  signer: { info: { username: 'signer', groups: ['system:authenticated'] }, signerGrants: ['sign example.com/my-signer'] },
};

const authorizer: Authorizer = {
  async authorize(attrs) {
    if (attrs.apiGroup !== 'certificates.k8s.io' || attrs.resource !== 'signers') return { allowed: true };
    const grants = USERS[attrs.user.username as UserName]?.signerGrants ?? [];
    return { allowed: grants.includes(`${attrs.verb} ${attrs.name ?? ''}`) || grants.includes(`${attrs.verb} *`) };
  },
};

export interface CsrTestServer {
  /** A client-node KubeConfig acting as `user`. */
  kubeConfig(user: UserName): k8s.KubeConfig;
  /** A kubeconfig file for kubectl acting as `user`. */
  kubeconfigFile(user: UserName): string;
  request(user: UserName, method: string, urlPath: string, opts?: RawOptions): Promise<RawResponse>;
  close(): Promise<void>;
}

export async function startCsrServer(): Promise<CsrTestServer> {
  const tokens = new Map(Object.entries(USERS).map(([name, u]) => [`${name}-token`, u.info]));
  const server = await startTestServer({ extraStrategies: [csrStrategy], authenticator: staticTokenAuthenticator(tokens), authorizer });

  const kubeConfig = (user: UserName): k8s.KubeConfig => tokenKubeConfig(server, `${user}-token`);

  const kubeconfigFile = (user: UserName): string => {
    const caFile = path.join(server.dataDir, 'csr-test-ca.crt');
    fs.writeFileSync(caFile, server.caPem);
    const file = path.join(server.dataDir, `kubeconfig-${user}`);
    fs.writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: c, cluster: {server: "${server.url}", certificate-authority: "${caFile}"}}]`,
        `users: [{name: u, user: {token: ${user}-token}}]`,
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    return file;
  };

  return {
    kubeConfig,
    kubeconfigFile,
    request: (user, method, urlPath, opts) => raw({ url: server.url, caPem: server.caPem, admin: { token: `${user}-token` } }, method, urlPath, opts),
    close: () => server.close(),
  };
}
