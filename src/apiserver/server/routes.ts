/** Dispatches a resource request to its handler by verb, after checking the URL addresses something served. */
import { errors } from '../http/errors.js';
import { handleDelete, handleDeleteCollection } from '../handlers/delete.js';
import { handleGet, handleList } from '../handlers/read.js';
import type { RequestScope } from '../handlers/scope.js';
import { handleWatch } from '../handlers/watch.js';
import { handleCreate, handlePatch, handleUpdate } from '../handlers/write.js';
import { validatePathSegmentName } from '../validation/names.js';

const SUBRESOURCE_VERBS: Record<string, string> = { get: 'get', update: 'update', patch: 'patch', create: 'create' };

function routeSubresource(scope: RequestScope): Promise<void> {
  const { info, registry, strategy } = scope;
  const sub = registry.info.subresources?.find((s) => s.name === info.subresource);
  const verb = SUBRESOURCE_VERBS[info.verb];
  if (!sub || info.collection) throw errors.pathNotFound();
  checkUrlName(info);
  if (!verb || !sub.verbs.includes(verb as never)) throw errors.methodNotAllowed();
  if (verb === 'create') {
    if (!strategy.virtualSubresources?.[sub.name]) throw errors.methodNotAllowed();
    return handleCreate(scope);
  }
  if (verb !== 'get' && !strategy.subresources?.[sub.name]) throw errors.methodNotAllowed();
  if (verb === 'get') return handleGet(scope);
  return verb === 'update' ? handleUpdate(scope) : handlePatch(scope);
}

/**
 * A decoded URL name that cannot be a path segment (IsValidPathSegmentName: `..`, or `/` or `%`
 * from `%2F`, `%2525`) is a 400 as upstream's storage key functions answer it: it never
 * addresses another object.
 */
function checkUrlName({ name, collection }: RequestScope['info']): void {
  if (name === undefined || collection) return;
  const msgs = validatePathSegmentName(name, false);
  if (msgs.length > 0) throw errors.badRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${msgs.join(';')}`);
}

const VERB_HANDLERS: Record<string, (scope: RequestScope) => Promise<void>> = {
  get: handleGet,
  list: handleList,
  watch: handleWatch,
  create: handleCreate,
  update: handleUpdate,
  patch: handlePatch,
  delete: handleDelete,
  deletecollection: handleDeleteCollection,
};

/** A namespaced resource needs a namespace in its path (lists may span all); a cluster one may not have one. */
function checkScope({ info, registry }: RequestScope): void {
  const namespaced = registry.info.namespaced;
  if (namespaced && info.namespace === undefined && !info.collection) throw errors.pathNotFound();
  if (!namespaced && info.namespace !== undefined && registry.info.plural !== 'namespaces') throw errors.pathNotFound();
}

/** The handler's promise; a URL that addresses nothing served throws at once (the pipeline's seat turns it into a rejection). */
export function routeResource(scope: RequestScope): Promise<void> {
  const { info, registry } = scope;
  checkScope(scope);
  if (info.subresource !== undefined) return routeSubresource(scope);
  checkUrlName(info);
  if (!registry.info.verbs.includes(info.verb as never)) {
    throw errors.verbNotSupported(info.verb, { group: registry.info.group, resource: registry.info.plural });
  }
  const handler = VERB_HANDLERS[info.verb];
  if (!handler) throw errors.methodNotAllowed();
  return handler(scope);
}
