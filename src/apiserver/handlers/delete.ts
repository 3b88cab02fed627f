/** DELETE of one object and of a collection, with DeleteOptions from the body or the query. */
import type { KObject, Status } from '../../api/meta.js';
import { apiVersionOf } from '../../api/resources.js';
import { isNotFound } from '../../lib/api-errors.js';
import { listValue } from '../codec/json-responses.js';
import { errors } from '../http/errors.js';
import { type FieldError, invalid, notSupported } from '../http/field-errors.js';
import { readBody } from '../http/http-io.js';
import { parseJsonStrict } from '../validation/json-body.js';
import { listObjects } from '../registry/generic/list.js';
import { buildSelection } from '../registry/generic/selection.js';
import { parseListOptions } from './list-options.js';
import { queryBool, queryInt64 } from '../http/query-params.js';
import { type RequestScope, respondObject, respondValue } from './scope.js';
import { dryRunErrors } from './write-options.js';
import { schemaTypeError } from '../validation/field-types.js';
import { META } from '../openapi/builder.js';
import { definitionSchema } from '../openapi/schema-for.js';

interface DeleteOptions {
  dryRun?: string[];
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

const POLICIES = ['Foreground', 'Background', 'Orphan'];

const BAD_BODY = 'DeleteOptions in version "v1" cannot be handled as a DeleteOptions';

const DELETE_OPTIONS_FIELDS = ['dryRun', 'gracePeriodSeconds', 'propagationPolicy', 'orphanDependents', 'preconditions'] as const;

/** The fields of a DeleteOptions body, type-checked as Go's decoder would; `null` means absent. */
function bodyOptions(v: Record<string, unknown>): DeleteOptions {
  const typeError = schemaTypeError(v, definitionSchema(`${META}DeleteOptions`));
  if (typeError) throw errors.badRequest(`${BAD_BODY}: ${typeError}`);
  const opts: Record<string, unknown> = {};
  for (const field of DELETE_OPTIONS_FIELDS) if (v[field] != null) opts[field] = v[field];
  return opts as DeleteOptions;
}

/** DeleteOptions from the query string, converted as the parameter codec does. */
function queryOptions(q: URLSearchParams): DeleteOptions {
  const opts: DeleteOptions = {};
  const grace = queryInt64(q, 'gracePeriodSeconds');
  if (grace !== undefined) opts.gracePeriodSeconds = grace;
  const policy = q.get('propagationPolicy');
  if (policy !== null) opts.propagationPolicy = policy;
  const orphan = queryBool(q, 'orphanDependents');
  if (orphan !== undefined) opts.orphanDependents = orphan;
  if (q.has('dryRun')) opts.dryRun = q.getAll('dryRun');
  return opts;
}

/** As upstream: a non-empty body is the DeleteOptions and the query is ignored; without one, the query is. */
async function readDeleteOptions(scope: RequestScope): Promise<DeleteOptions> {
  const body = await readBody(scope.req);
  let opts: DeleteOptions;
  if (body.length > 0 && body.toString('utf8').trim() !== '') {
    let value: unknown;
    try {
      value = parseJsonStrict(body.toString('utf8')).value;
    } catch (e) {
      throw errors.badRequest(`${BAD_BODY}: ${(e as Error).message}`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw errors.badRequest(`${BAD_BODY}: not an object`);
    const v = value as KObject;
    if (v.kind !== undefined && v.kind !== 'DeleteOptions') {
      throw errors.badRequest(`${BAD_BODY}: unexpected kind ${String(v.kind)}`);
    }
    opts = bodyOptions(v as Record<string, unknown>);
    scope.audit?.requestObject(v);
  } else {
    opts = queryOptions(scope.query);
  }
  const errs: FieldError[] = dryRunErrors(opts.dryRun ?? []);
  if (opts.propagationPolicy !== undefined) {
    if (opts.orphanDependents !== undefined) {
      errs.push(invalid('propagationPolicy', opts.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
    }
    if (!POLICIES.includes(opts.propagationPolicy)) {
      errs.push(notSupported('propagationPolicy', opts.propagationPolicy, [...POLICIES, 'nil']));
    }
  }
  if (errs.length > 0) throw errors.invalid('DeleteOptions', 'meta.k8s.io', '', errs);
  return opts;
}

function successStatus(scope: RequestScope, obj: KObject): Status {
  const { group, plural } = scope.registry.info;
  const details: Status['details'] = { name: obj.metadata?.name ?? '' };
  if (group) details.group = group;
  details.kind = plural;
  if (obj.metadata?.uid) details.uid = obj.metadata.uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details, code: 200 } as Status;
}

export async function handleDelete(scope: RequestScope): Promise<void> {
  const opts = await readDeleteOptions(scope);
  const dryRun = (opts.dryRun ?? []).length > 0;
  scope.ctx.dryRun = dryRun;
  const result = await scope.registry.delete(scope.info.namespace, scope.info.name ?? '', scope.ctx, {
    dryRun,
    preconditions: opts.preconditions,
  });
  if (result.deleted) {
    if (scope.registry.info.returnsDeletedObject) respondObject(scope, 200, result.object);
    else respondValue(scope, 200, successStatus(scope, result.object));
    return;
  }
  respondObject(scope, opts.orphanDependents === false ? 202 : 200, result.object);
}

/** Deletes every object the selectors match; answers with the list of what was deleted. */
export async function handleDeleteCollection(scope: RequestScope): Promise<void> {
  if (scope.registry.info.namespaced && scope.info.namespace === undefined) throw errors.methodNotAllowed();
  const opts = await readDeleteOptions(scope);
  const dryRun = (opts.dryRun ?? []).length > 0;
  scope.ctx.dryRun = dryRun;
  const listOpts = parseListOptions(scope.query, false);
  const selection = buildSelection(scope.strategy, listOpts.labelSelector, listOpts.fieldSelector);
  const list = await listObjects(scope.registry, scope.info.namespace, { ...listOpts, limit: 0, continue: '' }, selection);
  const deleted: KObject[] = [];
  for (const obj of list.items) {
    try {
      const r = await scope.registry.delete(obj.metadata?.namespace, obj.metadata?.name ?? '', scope.ctx, {
        dryRun,
        preconditions: opts.preconditions,
      });
      deleted.push(r.object);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  respondValue(
    scope,
    200,
    listValue({
      kind: scope.registry.info.listKind,
      apiVersion: apiVersionOf(scope.registry.info),
      metadata: { resourceVersion: String(scope.registry.store.currentRevision()) },
      items: deleted,
    }),
  );
}
