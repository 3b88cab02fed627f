/** GET of one object (and of read-only views of subresources) and LIST of a collection. */
import { errors } from '../http/errors.js';
import { listObjects, waitForRevision } from '../registry/generic/list.js';
import { buildSelection } from '../registry/generic/selection.js';
import { parseListOptions } from './list-options.js';
import { type RequestScope, respondList, respondObject } from './scope.js';

/**
 * A GET is the store's read, then the response's write: it takes no async step of its own (each
 * costs every GET a promise, a suspended frame and a turn of the microtask queue). A store that
 * serves reads from memory answers at once, and the response is written before this returns.
 */
export function handleGet(scope: RequestScope): Promise<void> {
  let revision: number | undefined;
  try {
    revision = minimumRevision(scope);
    const now = revision === undefined ? scope.registry.getNow(scope.info.namespace, scope.info.name ?? '') : undefined;
    if (now) {
      respondObject(scope, 200, now, true);
      return Promise.resolve();
    }
  } catch (err) {
    return Promise.reject(err as Error);
  }
  const read = (): Promise<void> => scope.registry.get(scope.info.namespace, scope.info.name ?? '').then((obj) => respondObject(scope, 200, obj, true));
  return revision === undefined ? read() : waitForRevision(scope.registry, revision).then(read);
}

/** The revision a GET's resourceVersion asks the store to have reached, if any; a field selector must pin the URL's name. */
function minimumRevision({ info, query }: RequestScope): number | undefined {
  const fieldSelector = query.get('fieldSelector') ?? '';
  const pinned = fieldSelector === '' ? null : /(?:^|,)\s*metadata\.name\s*==?\s*([^,]*)/.exec(fieldSelector);
  if (pinned && (pinned[1] ?? '').trim() !== (info.name ?? '')) {
    throw errors.badRequest("fieldSelector metadata.name doesn't match requested name");
  }
  const rv = query.get('resourceVersion') ?? '';
  if (rv === '' || rv === '0') return undefined;
  if (!/^\d+$/.test(rv)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return Number(rv);
}

export async function handleList(scope: RequestScope): Promise<void> {
  const opts = parseListOptions(scope.query, false);
  const selection = buildSelection(scope.strategy, opts.labelSelector, opts.fieldSelector);
  const list = await listObjects(scope.registry, scope.info.namespace, opts, selection);
  respondList(scope, list);
}
