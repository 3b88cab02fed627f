/** GET of one object (and of read-only views of subresources) and LIST of a collection. */
import { errors } from '../http/errors.js';
import { listObjects, waitForRevision } from '../registry/generic/list.js';
import { buildSelection } from '../registry/generic/selection.js';
import { parseListOptions } from './list-options.js';
import { type RequestScope, respondList, respondObject } from './scope.js';

export async function handleGet(scope: RequestScope): Promise<void> {
  const { info, query } = scope;
  const name = info.name ?? '';
  const fieldSelector = query.get('fieldSelector') ?? '';
  const pinned = fieldSelector === '' ? null : /(?:^|,)\s*metadata\.name\s*==?\s*([^,]*)/.exec(fieldSelector);
  if (pinned && (pinned[1] ?? '').trim() !== name) {
    throw errors.badRequest("fieldSelector metadata.name doesn't match requested name");
  }
  const rv = query.get('resourceVersion') ?? '';
  if (rv !== '' && rv !== '0') {
    if (!/^\d+$/.test(rv)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
    await waitForRevision(scope.registry, Number(rv));
  }
  const obj = await scope.registry.get(info.namespace, name);
  respondObject(scope, 200, obj, true);
}

export async function handleList(scope: RequestScope): Promise<void> {
  const opts = parseListOptions(scope.query, false);
  const selection = buildSelection(scope.strategy, opts.labelSelector, opts.fieldSelector);
  const list = await listObjects(scope.registry, scope.info.namespace, opts, selection);
  respondList(scope, list);
}
