/**
 * The pipeline's first step: who the caller is, from its certificate chain, credentials and
 * impersonation headers, answered at once when the authenticator knows it at once; the audit's
 * RequestReceived and the authentication metrics; 401 for a caller without credentials.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../../api/meta.js';
import { ANONYMOUS_USER } from '../authentication/request-authenticator.js';
import { authenticateNow, type AuthenticationRequest, type Authenticator } from '../authentication/types.js';
import type { RequestAudit } from '../audit/request.js';
import { closeConnectionAfter, distinctHeaders, isHttp2, peerOf } from '../http/connection.js';
import { errors } from '../http/errors.js';
import type { ApiServerMetrics } from '../http/metrics.js';
import type { RequestInfo } from '../http/request-info.js';
import { isPromise, then, type MaybePromise } from '../../lib/maybe-promise.js';

/**
 * HTTP/2 costs the server more than HTTP/1.1 and is open to abuse (CVE-2023-44487): as
 * kube-apiserver does, a caller who is not authenticated (401 or anonymous) gets this one request
 * on its connection, then a GOAWAY. `caller`: who authenticated (the impersonator, if any).
 */
function unauthenticatedHttp2(req: IncomingMessage, res: ServerResponse, caller: UserInfo | undefined): void {
  if (isHttp2(req) && (caller === undefined || caller.username === ANONYMOUS_USER.username)) closeConnectionAfter(req, res);
}

/**
 * What authentication reads of a request. A class, so that `headersDistinct` is a getter on its
 * prototype: a getter in an object literal defines an accessor on every request's object, a runtime
 * call that cost about 1% of a GET.
 */
class PipelineAuthenticationRequest implements AuthenticationRequest {
  readonly headers: IncomingHttpHeaders;
  readonly clientCertificateChain: Uint8Array[];
  impersonator?: UserInfo;
  constructor(
    private readonly req: IncomingMessage,
    readonly path: string,
  ) {
    this.headers = req.headers;
    this.clientCertificateChain = peerOf(req).chain;
  }

  /** Built on first read (by Node over HTTP/1.1): only impersonation reads it. */
  get headersDistinct(): NodeJS.Dict<string[]> {
    return distinctHeaders(this.req);
  }
}

/** A request being authenticated. */
interface Authenticating {
  req: IncomingMessage;
  res: ServerResponse;
  info: RequestInfo;
  audit: RequestAudit | undefined;
  request: PipelineAuthenticationRequest;
  metrics: ApiServerMetrics | undefined;
}

/** Who authenticates a server's requests, and where it counts them. */
export interface AuthenticationStep {
  authenticator: Authenticator;
  metrics: ApiServerMetrics | undefined;
}

/** The caller, at once when the authenticator knows it at once (and the audit stores at once). */
export function authenticateRequest(
  { authenticator, metrics }: AuthenticationStep,
  req: IncomingMessage,
  res: ServerResponse,
  info: RequestInfo,
  audit: RequestAudit | undefined,
): MaybePromise<UserInfo> {
  const request = new PipelineAuthenticationRequest(req, info.path);
  const a: Authenticating = { req, res, info, audit, request, metrics };
  let user: MaybePromise<UserInfo | undefined>;
  try {
    user = authenticateNow(authenticator, request);
  } catch (err) {
    return authenticationFailed(a, err);
  }
  if (!isPromise(user)) return authenticated(a, user);
  return user.then(
    (known) => authenticated(a, known),
    (err: unknown) => authenticationFailed(a, err),
  );
}

/** The authenticator refused the credentials (401) or the impersonation (403 or 400). */
async function authenticationFailed({ req, res, info, audit, request, metrics }: Authenticating, err: unknown): Promise<never> {
  metrics?.authenticated(undefined, true);
  unauthenticatedHttp2(req, res, request.impersonator);
  // A refused impersonation is the caller's request, audited as such; bad credentials have no caller.
  if (request.impersonator) await audit?.authenticated(info, request.impersonator);
  else await audit?.authenticationFailed(info, request.clientCertificateChain.length > 0);
  throw err;
}

/** The authenticator answered: no credentials is a 401; a caller is audited (RequestReceived) and goes on. */
function authenticated({ req, res, info, audit, request, metrics }: Authenticating, user: UserInfo | undefined): MaybePromise<UserInfo> {
  metrics?.authenticated(user?.username, false);
  unauthenticatedHttp2(req, res, request.impersonator ?? user);
  if (!user) return noCredentials(info, audit, request);
  if (!audit) return user;
  const stored = audit.authenticated(info, request.impersonator ?? user, request.impersonator && user);
  return then(stored, (ok) => {
    if (!ok) throw errors.internal(new Error('failed to store audit event'));
    return user;
  });
}

async function noCredentials(info: RequestInfo, audit: RequestAudit | undefined, request: PipelineAuthenticationRequest): Promise<never> {
  await audit?.authenticationFailed(info, request.clientCertificateChain.length > 0);
  throw errors.unauthorized();
}
