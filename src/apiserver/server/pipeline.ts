/**
 * What every request goes through once the TLS server hands it over, in upstream's handler-chain
 * order: authentication (with the client's certificate chain), audit, flow control, authorization,
 * then health, metrics, static documents, discovery or the resource handlers. Failures are thrown
 * as ApiErrors; the server answers them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { UserInfo } from '../../api/meta.js';
import type { Logger } from '../../log/logger.js';
import type { Authenticator } from '../authentication/types.js';
import type { RequestAudit } from '../audit/request.js';
import type { Authorizer, Decision } from '../authorization/authorizer.js';
import { serveDiscovery } from '../discovery/index.js';
import { FLOW_CONTROL_DEFAULTS, FlowControl, queueWaitLimitMs, type FlowControlOptions } from '../flowcontrol/flow-control.js';
import type { RequestScope } from '../handlers/scope.js';
import { errors } from '../http/errors.js';
import { writeBody } from '../http/http-io.js';
import { requestHost } from '../http/connection.js';
import type { ApiServerMetrics, RequestTracker } from '../http/metrics.js';
import { parseRequestInfo, requestPath, requestQuery, type RequestInfo, type RequestQuery } from '../http/request-info.js';
import type { Registries } from '../registry/registries.js';
import type { GenericRegistry } from '../registry/generic/registry.js';
import type { RequestContext } from '../registry/generic/strategy.js';
import type { Store } from '../storage/store.js';
import { health, isHealthPath, type HealthCheck } from './health.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, RequestDeadlines, requestDeadlineMs } from './request-timeout.js';
import { routeResource } from './routes.js';
import { authorizeNow } from '../authorization/authorizer.js';
import { isPromise } from '../../lib/maybe-promise.js';
import { authenticateRequest, type AuthenticationStep } from './pipeline-authentication.js';

/** The server options the pipeline reads. */
export interface PipelineOptions {
  store: Store;
  logger: Logger;
  authenticator: Authenticator;
  authorizer: Authorizer;
  /** Interval of watch BOOKMARK events (default 60 s). */
  bookmarkIntervalMs?: number;
  /** Bytes of events a watcher may fall behind by before it is closed so its client resumes (default 1 MiB). */
  watchBufferBytes?: number;
  /** Report and drop the fields a body's kind's OpenAPI schema does not declare (fieldValidation). */
  unknownFields?: boolean;
  /** Fixed documents served at non-resource paths after authorization (issuer discovery). */
  staticRoutes?: StaticRoute[];
  /** Where the server's metrics go; with one, GET /metrics serves it (to callers allowed `get` on /metrics). */
  metricsRegistry?: Registry;
  /** --max-requests-inflight and friends; absent: upstream's defaults (400 + 200 seats, priority levels), shedding at 250 ms of event-loop delay. */
  flowControl?: Omit<FlowControlOptions, 'registry'>;
  /** Checks /healthz and /readyz run besides the store's (kms-providers). */
  healthChecks?: HealthCheck[];
  /** --request-timeout: how long a request that is not long-running may take before it is answered 504 (default 60 s). */
  requestDeadlineMs?: number;
}

export interface StaticRoute {
  path: string;
  contentType: string;
  headers: Record<string, string>;
  body: string;
}

/** What the pipeline knows of a request on arrival. */
interface Arrival {
  url: RequestQuery;
  info: RequestInfo;
  tracker: RequestTracker | undefined;
  audit: RequestAudit | undefined;
  queueUntil: number;
}

/** What runs on a flow-control seat is given. */
interface Admitted {
  url: RequestQuery;
  info: RequestInfo;
  user: UserInfo;
  entry: GenericRegistry | undefined;
  audit: RequestAudit | undefined;
}

/** One request from its URL to its answer; also ends the watches it serves when the server closes. */
export class Pipeline {
  private readonly watches = new Set<() => void>();
  private readonly flowControl: FlowControl;
  private readonly deadlines: RequestDeadlines;
  private readonly authentication: AuthenticationStep;
  constructor(
    private readonly opts: PipelineOptions,
    private readonly registries: Registries,
    private readonly metrics: ApiServerMetrics | undefined,
  ) {
    this.flowControl = new FlowControl({ ...FLOW_CONTROL_DEFAULTS, ...opts.flowControl, registry: opts.metricsRegistry });
    this.deadlines = new RequestDeadlines(opts.logger);
    this.authentication = { authenticator: opts.authenticator, metrics };
  }

  /** The server closes: the watches it serves end, flow control stops sampling the event loop, deadlines are no longer timed. */
  close(): void {
    for (const stop of [...this.watches]) stop();
    this.flowControl.close();
    this.deadlines.close();
  }

  /**
   * The request's answer. Every step up to the handler's store read runs synchronously when what it
   * asks is known at once (a remembered certificate, token or decision, a free seat): each async step
   * of a GET cost a promise, a suspended frame and a microtask turn. Where a step must wait, the rest
   * follows its promise. May throw at once rather than reject: the server answers either alike.
   */
  handle(req: IncomingMessage, res: ServerResponse, tracker: RequestTracker | undefined, audit: RequestAudit | undefined): Promise<void> {
    const url = requestQuery(req.url);
    const info = parseRequestInfo(req.method ?? 'GET', requestPath(req.url), url.params);
    tracker?.setInfo(info);
    // --request-timeout, from here on: authentication and a wait in a flow-control queue count too.
    const serverMs = this.opts.requestDeadlineMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const deadlineMs = requestDeadlineMs(info, url.params, serverMs);
    const start = performance.now();
    const queueUntil = start + queueWaitLimitMs(deadlineMs ?? serverMs);
    const work = this.serveRequest(req, res, { url, info, tracker, audit, queueUntil });
    return deadlineMs === undefined ? work : this.deadlines.race(work, deadlineMs, start, res);
  }

  private serveRequest(req: IncomingMessage, res: ServerResponse, r: Arrival): Promise<void> {
    // Health endpoints too are authenticated and authorized, as upstream's: anonymous probes are
    // system:anonymous there (system:public-info-viewer), and --anonymous-auth=false closes them.
    const user = authenticateRequest(this.authentication, req, res, r.info, r.audit);
    return isPromise(user) ? user.then((known) => this.serveAuthenticated(req, res, r, known)) : this.serveAuthenticated(req, res, r, user);
  }

  private serveAuthenticated(req: IncomingMessage, res: ServerResponse, { url, info, tracker, audit, queueUntil }: Arrival, user: UserInfo): Promise<void> {
    // Only an authenticated request to an installed resource may name it in the metrics' labels.
    const entry = info.isResourceRequest ? this.registries.find(info.apiGroup, info.apiVersion, info.resource) : undefined;
    if (entry) tracker?.routed(entry.info);
    // Probes are exempt from flow control, as upstream's `probes` FlowSchema makes them.
    if (isHealthPath(info.path)) return this.serveHealth(res, info, url, user, audit);
    // Shed or queued before any further work: authorization and the handler run only with a seat,
    // which they hold until they return.
    return this.flowControl.handle(user, info, res, queueUntil, () => this.serveAdmitted(req, res, { url, info, user, entry, audit }));
  }

  private async serveHealth(res: ServerResponse, info: RequestInfo, url: RequestQuery, user: UserInfo, audit: RequestAudit | undefined): Promise<void> {
    await this.authorize(user, info, url.params.get('fieldSelector') ?? undefined, audit);
    const { status, body } = await health(info.path, this.opts.store, this.opts.healthChecks, url.params.has('verbose'), url.params.getAll('exclude'));
    writeBody(res, status, 'text/plain; charset=utf-8', body);
  }

  /**
   * Authorization, then the handler: what runs on a flow-control seat. Always a promise, never a
   * throw: flow control frees the seat when it settles.
   */
  private serveAdmitted(req: IncomingMessage, res: ServerResponse, target: Admitted): Promise<void> {
    try {
      const { url, info, user, audit } = target;
      const authorized = this.authorize(user, info, url.params.get('fieldSelector') ?? undefined, audit);
      return authorized ? authorized.then(() => this.serveAuthorized(req, res, target)) : this.serveAuthorized(req, res, target);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private serveAuthorized(req: IncomingMessage, res: ServerResponse, { url, info, user, entry, audit }: Admitted): Promise<void> {
    if (!info.isResourceRequest) return this.serveNonResource(req, res, info, url);
    if (!entry) throw errors.pathNotFound();
    return this.serveResource(req, res, { info, url, user, entry, audit });
  }

  private serveResource(
    req: IncomingMessage,
    res: ServerResponse,
    target: { info: RequestInfo; url: RequestQuery; user: UserInfo; entry: GenericRegistry; audit: RequestAudit | undefined },
  ): Promise<void> {
    const { info, url, user, entry, audit } = target;
    const ctx: RequestContext = {
      user,
      now: new Date(),
      dryRun: false,
      authorizer: this.opts.authorizer,
      objects: this.registries.reader,
      warnings: [],
      requestName: info.name,
    };
    if (audit) ctx.auditAnnotation = (key, value) => audit.annotate(key, value);
    const scope: RequestScope = {
      req,
      res,
      info,
      query: url.params,
      registry: entry,
      strategy: entry.strategy,
      ctx,
      logger: this.opts.logger,
      unknownFields: this.opts.unknownFields,
      bookmarkIntervalMs: this.opts.bookmarkIntervalMs ?? 60_000,
      watchBufferBytes: this.opts.watchBufferBytes,
      audit,
      trackWatch: (stop) => {
        this.watches.add(stop);
        const ended = this.metrics?.watchStarted(entry.info);
        return (slow) => {
          if (this.watches.delete(stop)) ended?.(slow);
        };
      },
    };
    return routeResource(scope);
  }

  /** Metrics, issuer discovery and the other static routes, then API discovery; 404 for anything else. */
  private async serveNonResource(req: IncomingMessage, res: ServerResponse, info: RequestInfo, url: RequestQuery): Promise<void> {
    if (info.path === '/metrics' && this.metrics && req.method === 'GET') {
      writeBody(res, 200, this.metrics.registry.contentType, await this.metrics.registry.metrics());
      return;
    }
    const route = this.opts.staticRoutes?.find((r) => r.path === info.path);
    if (route && (req.method === 'GET' || req.method === 'HEAD')) {
      for (const [k, v] of Object.entries(route.headers)) res.setHeader(k, v);
      writeBody(res, 200, route.contentType, route.body);
      return;
    }
    const found = serveDiscovery({
      path: `${info.path}${url.search}`,
      accept: req.headers.accept ?? '',
      ifNoneMatch: req.headers['if-none-match'],
      host: requestHost(req),
    });
    if (!found) throw errors.pathNotFound();
    res.statusCode = found.status;
    for (const [k, v] of Object.entries(found.headers)) res.setHeader(k, v);
    res.end(found.body);
  }

  /** Throws the 403 of a denied request; a promise only while the authorizer's decision is to come. */
  private authorize(user: UserInfo, info: RequestInfo, fieldSelector: string | undefined, audit: RequestAudit | undefined): Promise<void> | undefined {
    const attrs = info.isResourceRequest
      ? {
          user,
          verb: info.verb,
          apiGroup: info.apiGroup,
          resource: info.resource,
          subresource: info.subresource,
          namespace: info.namespace,
          name: info.name,
          fieldSelector,
        }
      : { user, verb: info.verb, path: info.path };
    const decision = authorizeNow(this.opts.authorizer, attrs);
    if (isPromise(decision)) return decision.then((later) => this.decided(user, info, later, audit));
    this.decided(user, info, decision, audit);
    return undefined;
  }

  private decided(user: UserInfo, info: RequestInfo, decision: Decision, audit: RequestAudit | undefined): void {
    this.metrics?.authorized(decision.allowed);
    audit?.authorized(decision.allowed, decision.reason);
    if (decision.allowed) return;
    if (!info.isResourceRequest) throw errors.forbiddenPath(user.username, info.verb, info.path);
    throw errors.forbidden(
      { group: info.apiGroup, resource: info.resource, name: info.name, subresource: info.subresource, namespace: info.namespace },
      user.username,
      info.verb,
      decision.reason,
    );
  }
}
