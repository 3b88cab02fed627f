/**
 * The service-account issuer discovery documents (`/.well-known/openid-configuration` and
 * `/openid/v1/jwks`) as fixed bodies: the keys do not change while the server runs, so the server
 * serves these strings as they are.
 */
import { exportJWK } from 'jose';
import type { VerificationKey } from './sa-keys.js';

export interface OidcRoute {
  path: string;
  contentType: string;
  headers: Record<string, string>;
  body: string;
}

export interface OidcOptions {
  issuer: string;
  /** Defaults to `https://<issuer host>/openid/v1/jwks`. */
  jwksUri?: string;
  keys: readonly VerificationKey[];
}

export const OIDC_CONFIG_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';
const CACHE = { 'Cache-Control': 'public, max-age=3600' };

function defaultJwksUri(issuer: string): string {
  try {
    return `https://${new URL(issuer).host}${JWKS_PATH}`;
  } catch {
    return JWKS_PATH;
  }
}

export async function oidcRoutes(o: OidcOptions): Promise<OidcRoute[]> {
  const algs = [...new Set(o.keys.map((k) => k.alg))].sort();
  const config = {
    issuer: o.issuer,
    jwks_uri: o.jwksUri ?? defaultJwksUri(o.issuer),
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algs,
  };
  const keys = await Promise.all(
    o.keys.map(async (k) => ({ use: 'sig', ...(await exportJWK(k.publicKey)), kid: k.kid, alg: k.alg })),
  );
  const routes: OidcRoute[] = [
    { path: OIDC_CONFIG_PATH, contentType: 'application/json', headers: CACHE, body: JSON.stringify(config) },
    { path: JWKS_PATH, contentType: 'application/jwk-set+json', headers: CACHE, body: JSON.stringify({ keys }) },
  ];
  // kube-apiserver (go-restful) answers each path with a trailing slash too, the spelling its OpenAPI spec
  // publishes and clients generated from it (the Python client's WellKnownApi and OpenidApi) request.
  return [...routes, ...routes.map((r) => ({ ...r, path: `${r.path}/` }))];
}
