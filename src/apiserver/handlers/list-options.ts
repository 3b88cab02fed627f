/**
 * ListOptions as list and watch receive them in the query string, validated with upstream's
 * messages (422 on `ListOptions.meta.k8s.io ""`, 400 for malformed values).
 */
import { errors } from '../http/errors.js';
import { type FieldError, forbidden, notSupported } from '../http/field-errors.js';
import { queryBool, queryInt64 } from '../http/query-params.js';
import type { ListOptions } from '../registry/generic/types.js';

/** ValidateListOptions for a list (upstream's non-watch branch). */
function listErrors(opts: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = opts.resourceVersionMatch;
  if (match !== '') {
    if (opts.resourceVersion === '') {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    }
    if (opts.continue !== '') {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
    if (match === 'Exact' && opts.resourceVersion === '0') {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    } else if (match !== 'Exact' && match !== 'NotOlderThan') {
      errs.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    }
  }
  if (opts.sendInitialEvents !== undefined) errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

/** validateWatchOptions: sendInitialEvents needs NotOlderThan, and vice versa. */
function watchErrors(opts: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = opts.resourceVersionMatch;
  if (opts.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errs.push(forbidden('sendInitialEvents', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  }
  if (match !== '') {
    if (opts.sendInitialEvents === undefined) {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    }
    if (match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (opts.continue !== '') {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
  }
  return errs;
}

/** The list options as the query gives them, before any check. */
function readListOptions(q: URLSearchParams): ListOptions {
  const opts: ListOptions = {
    labelSelector: q.get('labelSelector') ?? '',
    fieldSelector: q.get('fieldSelector') ?? '',
    limit: Math.max(0, queryInt64(q, 'limit') ?? 0),
    continue: q.get('continue') ?? '',
    resourceVersion: q.get('resourceVersion') ?? '',
    resourceVersionMatch: q.get('resourceVersionMatch') ?? '',
    allowWatchBookmarks: queryBool(q, 'allowWatchBookmarks') ?? false,
  };
  const sendInitialEvents = queryBool(q, 'sendInitialEvents');
  if (sendInitialEvents !== undefined) opts.sendInitialEvents = sendInitialEvents;
  const timeout = queryInt64(q, 'timeoutSeconds');
  if (timeout !== undefined) opts.timeoutSeconds = timeout;
  return opts;
}

export function parseListOptions(q: URLSearchParams, watch: boolean): ListOptions {
  const opts = readListOptions(q);
  const errs = watch ? watchErrors(opts) : listErrors(opts);
  if (errs.length > 0) throw errors.invalid('ListOptions', 'meta.k8s.io', '', errs);
  if (opts.continue !== '' && opts.resourceVersion !== '' && opts.resourceVersion !== '0') {
    throw errors.badRequest('specifying resource version is not allowed when using continue');
  }
  if (opts.resourceVersion !== '' && !/^\d+$/.test(opts.resourceVersion)) {
    throw errors.badRequest(`invalid resource version: strconv.ParseUint: parsing ${JSON.stringify(opts.resourceVersion)}: invalid syntax`);
  }
  return opts;
}
