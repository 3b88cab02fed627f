/**
 * What every resource handler receives (upstream's RequestScope), plus the response writers
 * that turn objects into the negotiated representation.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KList, KObject } from '../../api/meta.js';
import type { Logger } from '../../log/logger.js';
import { setWarnings, writeBody } from '../http/http-io.js';
import { type Output, encode, negotiateOutput } from './negotiation.js';
import type { GenericRegistry } from '../registry/generic/registry.js';
import type { RequestContext, Strategy } from '../registry/generic/strategy.js';
import type { RequestInfo } from '../http/request-info.js';
import type { RequestAudit } from '../audit/request.js';
import { queryPretty } from '../http/query-params.js';
import { partialObject, tableOf, parseIncludeObject } from './table.js';
import { listJson, listValue, partialListJson, partialObjectJson } from '../codec/json-responses.js';

export interface RequestScope {
  req: IncomingMessage;
  res: ServerResponse;
  info: RequestInfo;
  query: URLSearchParams;
  registry: GenericRegistry;
  strategy: Strategy;
  ctx: RequestContext;
  logger: Logger;
  /** Whether a body's fields its kind's schema does not declare are reported and dropped (fieldValidation). */
  unknownFields?: boolean;
  /**
   * Registers a watch so a server shutdown can end it cleanly; returns the unregister function,
   * told whether the watch was closed for falling behind.
   */
  trackWatch(stop: () => void): (slow: boolean) => void;
  bookmarkIntervalMs: number;
  /** Bytes of events a watcher may fall behind by before it is closed (default 1 MiB). */
  watchBufferBytes?: number;
  /** This request's audit trail, when a policy is set: handlers hand it what they decode and answer. */
  audit?: RequestAudit;
}

export function isPretty(req: IncomingMessage, query: URLSearchParams): boolean {
  const p = queryPretty(query);
  if (p !== undefined) return p;
  const ua = req.headers['user-agent'] ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

export function outputOf(scope: RequestScope, allowTable: boolean): Readonly<Output> {
  return negotiateOutput(scope.req.headers.accept, isPretty(scope.req, scope.query), allowTable);
}

function send(scope: RequestScope, status: number, value: unknown, out: Output): void {
  const { contentType, body } = encode(value, out);
  scope.audit?.responseObject(value);
  setWarnings(scope.res, scope.ctx.warnings);
  writeBody(scope.res, status, contentType, body);
}

/**
 * A response whose compact JSON is built from its stored objects' encodings (codec/json-responses.ts);
 * `value` is built only for what needs the value itself: pretty or YAML output, or an audit policy.
 */
function sendCompact(scope: RequestScope, status: number, out: Output, value: () => unknown, compact: () => string): void {
  if (out.kind === 'yaml' || out.pretty) return send(scope, status, value(), out);
  scope.audit?.responseObject(value());
  setWarnings(scope.res, scope.ctx.warnings);
  writeBody(scope.res, status, 'application/json', `${compact()}\n`);
}

/** A single object, as JSON/YAML, PartialObjectMetadata or (for reads) a one-row Table. */
export function respondObject(scope: RequestScope, status: number, obj: KObject, allowTable = false): void {
  const out = outputOf(scope, allowTable);
  if (out.kind === 'table') {
    const include = parseIncludeObject(scope.query);
    send(scope, status, tableOf(scope.strategy, [obj], {}, { include, metaVersion: out.metaVersion, now: scope.ctx.now, withColumns: true }), out);
  } else if (out.kind === 'partial') {
    sendCompact(scope, status, out, () => partialObject(obj, out.metaVersion), () => partialObjectJson(obj, out.metaVersion));
  } else send(scope, status, obj, out);
}

export function respondList(scope: RequestScope, list: KList): void {
  const out = outputOf(scope, true);
  if (out.kind === 'table') {
    const include = parseIncludeObject(scope.query);
    send(scope, 200, tableOf(scope.strategy, list.items, list.metadata, { include, metaVersion: out.metaVersion, now: scope.ctx.now, withColumns: true }), out);
  } else if (out.kind === 'partial') {
    const partialList = (): unknown => ({
      kind: 'PartialObjectMetadataList',
      apiVersion: `meta.k8s.io/${out.metaVersion}`,
      metadata: list.metadata,
      items: list.items.map((o) => partialObject(o, out.metaVersion)),
    });
    sendCompact(scope, 200, out, partialList, () => partialListJson(list, out.metaVersion));
  } else sendCompact(scope, 200, out, () => listValue(list), () => listJson(list));
}

/** Any non-object body (Status, List of deleted items) in JSON or YAML. */
export function respondValue(scope: RequestScope, status: number, value: unknown): void {
  send(scope, status, value, outputOf(scope, false));
}
