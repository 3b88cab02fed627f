/**
 * The contract between the request pipeline and access control: the pipeline asks who the
 * caller is (authentication, including impersonation) and whether they may act (authorization,
 * the Authorizer in authorizer.ts), and how access control reads stored objects.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { KObject, UserInfo } from '../../api/meta.js';
import type { ResourceOf } from '../../api/resources.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';

export interface AuthenticationRequest {
  headers: IncomingHttpHeaders;
  /**
   * Every value of each header (Node's `headersDistinct`): `headers` joins a repeated header into one
   * string, which would turn two Impersonate-Group headers into one group named "a, b".
   */
  headersDistinct?: NodeJS.Dict<string[]>;
  /** The percent-decoded request path: anonymous access depends on it. */
  path?: string;
  /** DER certificates the TLS client presented, leaf first (empty when none). */
  clientCertificateChain: Uint8Array[];
  /** Set by impersonation: the caller as authenticated, whom the audit log names as the user. */
  impersonator?: UserInfo;
}

export interface Authenticator {
  /**
   * The caller's identity, or undefined when the request carries no credentials at all (the
   * pipeline then answers 401). Throws ApiError 401 for credentials that are present but invalid,
   * and ApiError 403 for impersonation the caller may not perform.
   */
  authenticate(req: AuthenticationRequest): Promise<UserInfo | undefined>;
  /**
   * The same answer, given at once when nothing must be waited for (a remembered certificate or
   * token, a cached Secret), else as a promise; may throw where `authenticate` rejects. The request
   * pipeline asks this one, so a known caller costs it no async step.
   */
  authenticateNow?(req: AuthenticationRequest): MaybePromise<UserInfo | undefined>;
}

/** The authenticator's answer, at once when it can give one (authenticateNow), else as a promise. */
export function authenticateNow(authenticator: Authenticator, req: AuthenticationRequest): MaybePromise<UserInfo | undefined> {
  return authenticator.authenticateNow ? authenticator.authenticateNow(req) : authenticator.authenticate(req);
}

/**
 * Read access to stored objects, for authenticators, the authorizer and strategies that consult
 * other objects; typed by the resource (a plain ResourceInfo reads KObjects).
 */
export interface ObjectReader {
  get<T extends KObject>(info: ResourceOf<T>, namespace: string | undefined, name: string): Promise<T | undefined>;
  /** `get`'s answer at once when the store can tell it (Store.readNow): null when absent, undefined when only `get` can tell. */
  readNow?<T extends KObject>(info: ResourceOf<T>, namespace: string | undefined, name: string): T | null | undefined;
  list<T extends KObject>(info: ResourceOf<T>, namespace: string | undefined): Promise<T[]>;
}
