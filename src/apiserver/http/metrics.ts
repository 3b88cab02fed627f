/**
 * kube-apiserver's own metrics, same names and labels, in an injected prom-client Registry:
 * - apiserver_request_total{verb,group,version,resource,subresource,scope,component,code}
 * - apiserver_request_duration_seconds{verb,group,version,resource,subresource,scope,component}
 *   (long-running requests, WATCH, are left out, as upstream does)
 * - apiserver_current_inflight_requests{request_kind}: readOnly or mutating, watches left out
 * - apiserver_registered_watchers{group,version,kind}
 * - apiserver_terminated_watchers_total{group,version,resource}: closed for falling behind
 * - apiserver_storage_objects{resource}, apiserver_storage_db_total_size_in_bytes{endpoint}: polled (storage-metrics.ts)
 * - authentication_attempts{result}, authenticated_user_requests{username}
 * - apiserver_authorization_decisions_total{decision}
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ResourceInfo } from '../../api/resources.js';
import type { RequestInfo } from './request-info.js';
import { ScrapedCounter } from '../../lib/scraped-counter.js';
import { ScrapedHistogram } from '../../lib/scraped-histogram.js';

type RequestLabel = 'verb' | 'group' | 'version' | 'resource' | 'subresource' | 'scope' | 'component';

/** Upstream's buckets for apiserver_request_duration_seconds. */
const DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

/** The HTTP methods that are their own verb label; any other is `other`, as upstream bounds it. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/**
 * The series a request is counted in, labelled only from the route that served it (upstream's
 * InstrumentRouteFunc): group, version, resource and subresource come from an installed resource and
 * its declared subresources, never from the URL. A request that reached no route (refused before
 * routing, an unknown group, resource or path) is labelled by its verb alone, so no client can mint
 * new series. Made once per route, verb, subresource and scope, and its keys once per code: every
 * request would otherwise build a label object and two key strings.
 */
class RequestSeries {
  readonly key: string;
  readonly labelsOf = (): Record<RequestLabel, string> => this.labels;
  private readonly codes = new Map<number, { key: string; labelsOf: () => Record<RequestLabel | 'code', string> }>();

  constructor(readonly labels: Readonly<Record<RequestLabel, string>>) {
    this.key = `${labels.verb} ${labels.group} ${labels.version} ${labels.resource} ${labels.subresource} ${labels.scope}`;
  }

  /** apiserver_request_total's series for a response code. */
  withCode(status: number): { key: string; labelsOf: () => Record<RequestLabel | 'code', string> } {
    let s = this.codes.get(status);
    if (!s) {
      const code = String(status);
      this.codes.set(status, (s = { key: `${this.key} ${code}`, labelsOf: () => ({ ...this.labels, code }) }));
    }
    return s;
  }
}

/** What a request's series is found by: its route (none: unrouted), then its verb, then its scope and subresource. */
type SeriesByVerb = Map<string, Map<string, RequestSeries>>;

/** The series `verb` and `scopeAndSubresource` name, made with `labels` if it is new. */
function seriesOf(byVerb: SeriesByVerb, verb: string, scopeAndSubresource: string, labels: Record<RequestLabel, string>): RequestSeries {
  let byScope = byVerb.get(verb);
  if (!byScope) byVerb.set(verb, (byScope = new Map()));
  let s = byScope.get(scopeAndSubresource);
  if (!s) byScope.set(scopeAndSubresource, (s = new RequestSeries(Object.freeze(labels))));
  return s;
}

/** The verb label as upstream's CleanVerb reports it: the HTTP method, except LIST, WATCH, DELETECOLLECTION, APPLY. */
function reportedVerb(method: string, req: IncomingMessage, info: RequestInfo): string {
  if (info.verb === 'list' || info.verb === 'watch' || info.verb === 'deletecollection') return info.verb.toUpperCase();
  if (method === 'PATCH' && (req.headers['content-type'] ?? '').startsWith('application/apply-patch')) return 'APPLY';
  return KNOWN_METHODS.has(method) ? method : 'other';
}

/** Upstream's CleanScope: a named object (or a create) is `resource`, else `namespace` or `cluster`. */
function reportedScope(info: RequestInfo): string {
  if (info.name || info.verb === 'create') return 'resource';
  return info.namespace ? 'namespace' : 'cluster';
}

/** Usernames authenticated_user_requests names as they are (upstream's compressUsername). */
const NAMED_USERS = new Set(['admin', 'client', 'kube_proxy', 'kubelet', 'system:serviceaccount:kube-system:default']);

/** authenticated_user_requests' username label: known identities by name, emails and the rest bucketed. */
function compressUsername(username: string): string {
  if (NAMED_USERS.has(username)) return username;
  return username.includes('@') ? 'email_id' : 'other';
}

export interface RequestTracker {
  setInfo(info: RequestInfo): void;
  /** The request reached this installed resource (after authentication): its labels may name it. */
  routed(route: ResourceInfo): void;
}

export interface ApiServerMetricsOptions {
  registry: Registry;
}

export class ApiServerMetrics {
  readonly registry: Registry;
  private readonly requests: ScrapedCounter<RequestLabel | 'code'>;
  private readonly durations: ScrapedHistogram<RequestLabel>;
  /** Requests in flight by kind, read when scraped (every request changes them twice). */
  private readonly inflight = { readOnly: 0, mutating: 0 };
  private readonly watchers: Gauge<'group' | 'version' | 'kind'>;
  private readonly terminated: Counter<'group' | 'version' | 'resource'>;
  private readonly authAttempts: ScrapedCounter<'result'>;
  private readonly userRequests: ScrapedCounter<'username'>;
  private readonly decisions: ScrapedCounter<'decision'>;
  private readonly routedSeries = new WeakMap<ResourceInfo, SeriesByVerb>();
  private readonly unroutedSeries: SeriesByVerb = new Map();

  constructor(opts: ApiServerMetricsOptions) {
    const registers = [opts.registry];
    this.registry = opts.registry;
    const requestLabels: RequestLabel[] = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'];
    this.requests = new ScrapedCounter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...requestLabels, 'code'],
      registers,
    });
    this.durations = new ScrapedHistogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, group, version, resource, subresource, scope and component.',
      labelNames: requestLabels,
      buckets: DURATION_BUCKETS,
      registers,
    });
    const inflight = this.inflight;
    new Gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      registers,
      collect() {
        this.set({ request_kind: 'readOnly' }, inflight.readOnly);
        this.set({ request_kind: 'mutating' }, inflight.mutating);
      },
    });
    this.watchers = new Gauge({ name: 'apiserver_registered_watchers', help: 'Number of currently registered watchers for a given resources', labelNames: ['group', 'version', 'kind'], registers });
    this.terminated = new Counter({
      name: 'apiserver_terminated_watchers_total',
      help: 'Counter of watchers closed due to unresponsiveness broken by resource type.',
      labelNames: ['group', 'version', 'resource'],
      registers,
    });
    this.authAttempts = new ScrapedCounter({ name: 'authentication_attempts', help: 'Counter of authenticated attempts.', labelNames: ['result'], registers });
    this.userRequests = new ScrapedCounter({ name: 'authenticated_user_requests', help: 'Counter of authenticated requests broken out by username.', labelNames: ['username'], registers });
    this.decisions = new ScrapedCounter({ name: 'apiserver_authorization_decisions_total', help: 'Total number of terminal decisions made by an authorizer split by decision.', labelNames: ['decision'], registers });
  }

  /**
   * Counts a request from its start and records it when the response is done or the client went
   * away; the server tells the tracker what the request is once it has parsed it.
   */
  startRequest(req: IncomingMessage, res: ServerResponse): RequestTracker {
    // A float of ms: process.hrtime.bigint() allocates a BigInt on each of its two calls.
    const started = performance.now();
    const kind = req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS' ? 'readOnly' : 'mutating';
    let info: RequestInfo | undefined;
    let route: ResourceInfo | undefined;
    let inflight = true;
    this.inflight[kind]++;
    const leaveInflight = (): void => {
      if (inflight) this.inflight[kind]--;
      inflight = false;
    };
    res.once('close', () => {
      leaveInflight();
      const series = this.seriesOf(req, info, route);
      const counted = series.withCode(res.statusCode);
      this.requests.inc(counted.key, counted.labelsOf);
      if (series.labels.verb !== 'WATCH') this.durations.observe(series.key, series.labelsOf, (performance.now() - started) / 1000);
    });
    return {
      setInfo(parsed) {
        info = parsed;
        // Watches are long-running: upstream keeps them out of the inflight gauge and the latency histogram.
        if (parsed.isResourceRequest && parsed.verb === 'watch') leaveInflight();
      },
      routed(resource) {
        route = resource;
      },
    };
  }

  private seriesOf(req: IncomingMessage, info: RequestInfo | undefined, route: ResourceInfo | undefined): RequestSeries {
    const method = req.method ?? 'GET';
    if (!info || !route) {
      const verb = KNOWN_METHODS.has(method) ? method : 'other';
      return this.unroutedSeries.get(verb)?.get('') ?? seriesOf(this.unroutedSeries, verb, '', { verb, group: '', version: '', resource: '', subresource: '', scope: '', component: 'apiserver' });
    }
    let byVerb = this.routedSeries.get(route);
    if (!byVerb) this.routedSeries.set(route, (byVerb = new Map()));
    const verb = reportedVerb(method, req, info);
    const subresource = info.subresource !== undefined && route.subresources?.some((s) => s.name === info.subresource) ? info.subresource : '';
    const scope = reportedScope(info);
    const key = subresource ? `${scope} ${subresource}` : scope;
    return byVerb.get(verb)?.get(key) ?? seriesOf(byVerb, verb, key, {
      verb,
      group: route.group,
      version: route.version,
      resource: route.plural,
      subresource,
      scope,
      component: 'apiserver',
    });
  }

  authenticated(username: string | undefined, failed: boolean): void {
    const result = failed ? 'error' : username === undefined ? 'failure' : 'success';
    this.authAttempts.inc(result, () => ({ result }));
    if (username === undefined) return;
    const compressed = compressUsername(username);
    this.userRequests.inc(compressed, () => ({ username: compressed }));
  }

  authorized(allowed: boolean): void {
    const decision = allowed ? 'allowed' : 'denied';
    this.decisions.inc(decision, () => ({ decision }));
  }

  /** A watch started; the returned function ends it (`slow`: closed for falling behind). */
  watchStarted(info: ResourceInfo): (slow: boolean) => void {
    const labels = { group: info.group, version: info.version, kind: info.kind };
    this.watchers.inc(labels);
    return (slow) => {
      this.watchers.dec(labels);
      if (slow) this.terminated.inc({ group: info.group, version: info.version, resource: info.plural });
    };
  }
}
