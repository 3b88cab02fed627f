/**
 * Access control in one call: everything the API server needs to know who a caller is and what
 * they may do, built from configuration. The server wires the results in; nothing here touches
 * HTTP or storage directly.
 */
import type { KeyObject } from 'node:crypto';
import type { KObject } from '../../api/meta.js';
import { rbacStrategies } from '../registry/rbac/rbac.js';
import { reviewStrategies } from '../registry/authorization/reviews.js';
import { serviceAccountStrategy } from '../registry/core/service-account.js';
import type { Strategy, VirtualCreate } from '../registry/generic/strategy.js';
import type { Authorizer } from '../authorization/authorizer.js';
import type { ObjectReader } from '../authentication/types.js';
import { tokenRequestSubresource, tokenReviewStrategy } from '../registry/authentication/tokens.js';
import { defaultPolicyObjects, PUBLIC_INFO_PATHS, type ControllerPolicyScope } from '../authorization/rbac/default-policy.js';
import { createBootstrapTokenAuthenticator } from '../authentication/bootstrap-token.js';
import type { BootstrapTokenSecrets } from '../authentication/bootstrap-token-secrets.js';
import { createImpersonatingAuthenticator } from './impersonation.js';
import { oidcRoutes, type OidcRoute } from '../authentication/oidc.js';
import { createNodeAuthorizer } from '../authorization/node/node-authorizer.js';
import { createRbacAuthorizer } from '../authorization/rbac/rbac-authorizer.js';
import type { RbacIndex } from '../authorization/rbac/rbac-index.js';
import type { NodeGraph } from '../authorization/node/node-graph.js';
import { createRequestAuthenticator } from '../authentication/request-authenticator.js';
import { loadSigningKey, loadVerificationKey, type SigningKey } from '../authentication/sa-keys.js';
import { createServiceAccountTokenAuthenticator } from '../authentication/sa-verify.js';
import { createTokenFileAuthenticator } from '../authentication/token-file.js';
import { audienceAgnostic, createTokenChain, type TokenAuthenticator, type TokenChain } from '../authentication/token-union.js';
import type { Authenticator } from '../authentication/types.js';
import { unionAuthorizer } from '../authorization/union.js';
import { createX509Authenticator } from '../authentication/x509.js';

export interface AccessControlOptions {
  objects: ObjectReader;
  /** RBAC decisions from memory (the caller owns it and stops it); without it they read `objects`. */
  rbacIndex?: RbacIndex;
  /** Node authorizer relationships from memory (the caller owns the graph and stops it); without it they read `objects`. */
  nodeGraph?: NodeGraph;
  /** Bootstrap-token Secrets from memory (the caller owns the cache and stops it); without it they read `objects`. */
  bootstrapTokens?: BootstrapTokenSecrets;
  /** CA bundle for client certificates; omit to disable x509 authentication. */
  clientCaPem?: string;
  /** Contents of a --token-auth-file (CSV). */
  tokenFile?: string;
  /** Service-account signing key (private, RSA ≥ 2048 or EC P-256/384/521), PEM or KeyObject. */
  serviceAccountKey: KeyObject | string;
  /** Further public keys whose tokens stay valid (key rotation). */
  extraVerificationKeys?: (KeyObject | string)[];
  /** --service-account-issuer; the first one signs, all are accepted. */
  issuer: string | string[];
  /** --api-audiences; defaults to the issuers. */
  audiences?: string[];
  /** --service-account-jwks-uri. */
  jwksUri?: string;
  maxTokenExpirationSeconds?: number;
  extendTokenExpiration?: boolean;
  /**
   * --anonymous-auth: requests without credentials to the public-info paths (/healthz, /livez,
   * /readyz, /version) are system:anonymous; everywhere else, and without it, they get 401.
   */
  anonymous?: boolean;
  now?: () => Date;
  /** What kube-identity's own controller runs with (`up`): its identity's RBAC follows (default: up's defaults). */
  controllerPolicy?: ControllerPolicyScope;
}

export interface AccessControl {
  /** Request authentication with impersonation on top. */
  authenticator: Authenticator;
  authorizer: Authorizer;
  /**
   * RBAC kinds, TokenReview, the access/identity reviews, and the ServiceAccount strategy with the
   * `token` virtual subresource added (it replaces the built-in one by group and plural).
   */
  strategies: Strategy[];
  /** Virtual subresources to merge into other kinds' strategies: `serviceaccounts` → `token`. */
  virtualSubresources: { serviceaccounts: Record<string, VirtualCreate> };
  /** Bodies for the issuer discovery routes, to serve as non-resource GETs. */
  oidcRoutes: OidcRoute[];
  /** Default RBAC objects to create at start when absent (and reconcile when stored). */
  defaultObjects: KObject[];
  /** The token union, shared by request authentication and TokenReview. */
  tokens: TokenChain;
  signingKey: SigningKey;
  apiAudiences: string[];
}

export async function createAccessControl(o: AccessControlOptions): Promise<AccessControl> {
  const now = o.now ?? (() => new Date());
  const issuers = Array.isArray(o.issuer) ? o.issuer : [o.issuer];
  const primaryIssuer = issuers[0];
  if (!primaryIssuer) throw new Error('at least one service account issuer is required');
  const apiAudiences = o.audiences && o.audiences.length > 0 ? o.audiences : issuers;
  const signingKey = loadSigningKey(o.serviceAccountKey);
  const keys = [signingKey, ...(o.extraVerificationKeys ?? []).map(loadVerificationKey)];

  const tokenAuthenticators: TokenAuthenticator[] = [];
  if (o.tokenFile !== undefined) tokenAuthenticators.push(audienceAgnostic(createTokenFileAuthenticator(o.tokenFile), apiAudiences));
  tokenAuthenticators.push(createServiceAccountTokenAuthenticator({ keys, issuers, objects: o.objects, now }));
  tokenAuthenticators.push(audienceAgnostic(createBootstrapTokenAuthenticator({ objects: o.objects, secrets: o.bootstrapTokens, now }), apiAudiences));
  const tokens = createTokenChain(tokenAuthenticators, apiAudiences);

  // kube-apiserver's `--authorization-mode=Node,RBAC`.
  const authorizer = unionAuthorizer([
    createNodeAuthorizer({ objects: o.objects, graph: o.nodeGraph }),
    createRbacAuthorizer({ objects: o.objects, index: o.rbacIndex }),
  ]);
  const x509 = o.clientCaPem ? createX509Authenticator({ clientCaPem: o.clientCaPem, now }) : undefined;
  const authenticator = createImpersonatingAuthenticator(
    createRequestAuthenticator({ x509, tokens, anonymousPaths: o.anonymous ? new Set(PUBLIC_INFO_PATHS) : undefined }),
    authorizer,
  );
  const tokenRequest = tokenRequestSubresource({
    key: signingKey,
    issuer: primaryIssuer,
    apiAudiences,
    maxExpirationSeconds: o.maxTokenExpirationSeconds,
    extendExpiration: o.extendTokenExpiration,
  });
  return {
    authenticator,
    authorizer,
    strategies: [
      ...rbacStrategies(),
      tokenReviewStrategy(tokens),
      ...reviewStrategies(),
      { ...serviceAccountStrategy, virtualSubresources: { ...serviceAccountStrategy.virtualSubresources, token: tokenRequest } },
    ],
    virtualSubresources: { serviceaccounts: { token: tokenRequest } },
    oidcRoutes: await oidcRoutes({ issuer: primaryIssuer, jwksUri: o.jwksUri, keys }),
    defaultObjects: defaultPolicyObjects(o.controllerPolicy),
    tokens,
    signingKey,
    apiAudiences,
  };
}
