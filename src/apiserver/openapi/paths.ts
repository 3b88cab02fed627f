/**
 * OpenAPI path items for one group-version, derived from the RESOURCES table. kubectl decides
 * whether the server validates fields by finding, for the object's GVK, a PATCH operation that
 * carries an inline `fieldValidation` query parameter; every writable kind therefore has one.
 */
import type { ResourceInfo } from '../../api/resources.js';
import type { GroupVersionResources } from '../../api/groups.js';
import { type GVK, META, ref, type Schema } from './builder.js';
import { schemaNameFor } from './schemas.js';

const query = (name: string, description: string, type = 'string'): Schema => ({
  name,
  in: 'query',
  description,
  schema: { type, uniqueItems: true },
});
const pathParam = (name: string, description: string): Schema => ({
  name,
  in: 'path',
  description,
  required: true,
  schema: { type: 'string', uniqueItems: true },
});

const PRETTY = query('pretty', "If 'true', then the output is pretty printed.");
const DRY_RUN = query('dryRun', 'When present, modifications are not persisted. Valid value: All.');
const FIELD_MANAGER = query('fieldManager', 'A name associated with the actor or entity making these changes.');
const FIELD_VALIDATION = query(
  'fieldValidation',
  'How to handle unknown or duplicate fields: Ignore, Warn or Strict (the default).',
);
const FORCE = query('force', 'Force apply requests to take ownership of conflicting fields.', 'boolean');
const WRITE = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
const LIST = [
  query('allowWatchBookmarks', 'Request watch events with type BOOKMARK.', 'boolean'),
  query('continue', 'The continue token of the previous page.'),
  query('fieldSelector', 'A selector restricting the list by fields.'),
  query('labelSelector', 'A selector restricting the list by labels.'),
  query('limit', 'The maximum number of items to return.', 'integer'),
  query('resourceVersion', 'The resource version to list or watch from.'),
  query('resourceVersionMatch', 'How resourceVersion is applied: Exact or NotOlderThan.'),
  query('timeoutSeconds', 'Timeout for the list or watch call.', 'integer'),
  query('watch', 'Watch for changes instead of listing.', 'boolean'),
];
const DELETE = [
  DRY_RUN,
  query('gracePeriodSeconds', 'The duration in seconds before the object should be deleted.', 'integer'),
  query('propagationPolicy', 'Orphan, Background or Foreground.'),
];

const PATCH_TYPES = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];

const PATCH_BODY: Schema = Object.fromEntries(PATCH_TYPES.map((t) => [t, { schema: ref(`${META}Patch`) }]));

const json = (schemaName: string): Schema => ({ 'application/json': { schema: ref(schemaName) } });

interface OpSpec {
  action: string;
  id: string;
  gvk: GVK;
  /** Schema of the response body. */
  returns: string;
  params: Schema[];
  body?: Schema;
}

function operation(o: OpSpec): Schema {
  const op: Schema = {
    description: `${o.action} ${o.gvk.kind}`,
    operationId: o.id,
    parameters: o.params,
    responses: { '200': { description: 'OK', content: json(o.returns) } },
    'x-kubernetes-action': o.action,
    'x-kubernetes-group-version-kind': o.gvk,
  };
  if (o.body) op.requestBody = { required: true, content: o.body };
  return op;
}

function nameOf(gvk: GVK): string {
  const name = schemaNameFor(gvk);
  if (!name) throw new Error(`no OpenAPI schema for ${gvk.group}/${gvk.version}/${gvk.kind}`);
  return name;
}

interface Target {
  gvk: GVK;
  /** Schema name of the kind. */
  name: string;
  /** Operation id stem, e.g. ServiceAccountNamespaced or CertificateSigningRequestApproval. */
  id: string;
  verbs: readonly string[];
  params: Schema[];
  /** DELETE answers the object (upstream's ReturnDeletedObject); otherwise a Status. */
  returnsDeletedObject?: boolean;
}

/** get, put, patch, post and delete on one object (or one object's subresource). */
function itemOps(t: Target, kind: string): Schema {
  const item: Schema = { parameters: [pathParam('name', `name of the ${kind}`), ...t.params, PRETTY] };
  const can = (v: string): boolean => t.verbs.includes(v);
  const op = (action: string, id: string, params: Schema[], body?: Schema, returns = t.name): Schema =>
    operation({ action, id: id + t.id, gvk: t.gvk, returns, params, body });
  if (can('get')) item.get = op('get', 'read', []);
  if (can('update')) item.put = op('put', 'replace', WRITE, json(t.name));
  if (can('patch')) item.patch = op('patch', 'patch', [...WRITE, FORCE], PATCH_BODY);
  if (can('create')) item.post = op('post', 'create', WRITE, json(t.name));
  if (can('delete')) item.delete = op('delete', 'delete', DELETE, json(`${META}DeleteOptions`), t.returnsDeletedObject ? t.name : `${META}Status`);
  return item;
}

function collectionOps(t: Target, listName: string): Schema {
  const collection: Schema = { parameters: [...t.params, PRETTY] };
  const can = (v: string): boolean => t.verbs.includes(v);
  if (can('list')) collection.get = operation({ action: 'list', id: `list${t.id}`, gvk: t.gvk, returns: listName, params: LIST });
  if (can('create')) {
    collection.post = operation({ action: 'post', id: `create${t.id}`, gvk: t.gvk, returns: t.name, params: WRITE, body: json(t.name) });
  }
  if (can('deletecollection')) {
    const params = [...LIST, ...DELETE];
    collection.delete = operation({ action: 'deletecollection', id: `deleteCollection${t.id}`, gvk: t.gvk, returns: `${META}Status`, params });
  }
  return collection;
}

function resourcePaths(r: ResourceInfo, prefix: string): Record<string, Schema> {
  const gvk: GVK = { group: r.group, version: r.version, kind: r.kind };
  const params = r.namespaced ? [pathParam('namespace', 'object name and auth scope, such as for teams and projects')] : [];
  const main: Target = { gvk, name: nameOf(gvk), id: `${r.kind}${r.namespaced ? 'Namespaced' : ''}`, verbs: r.verbs, params, returnsDeletedObject: r.returnsDeletedObject };
  const listName = r.verbs.includes('list') ? nameOf({ ...gvk, kind: r.listKind }) : '';
  const base = `${prefix}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}`;
  const out: Record<string, Schema> = { [base]: collectionOps(main, listName) };
  if (r.verbs.some((v) => ['get', 'update', 'patch', 'delete'].includes(v))) {
    out[`${base}/{name}`] = itemOps({ ...main, verbs: main.verbs.filter((v) => v !== 'create') }, r.kind);
  }
  for (const s of r.subresources ?? []) {
    const subGvk: GVK = { group: s.group, version: s.version, kind: s.kind };
    const id = `${main.id}${s.name.charAt(0).toUpperCase()}${s.name.slice(1)}`;
    out[`${base}/{name}/${s.name}`] = itemOps({ gvk: subGvk, name: nameOf(subGvk), id, verbs: s.verbs, params }, s.kind);
  }
  if (r.namespaced && r.verbs.includes('list')) {
    const op = operation({ action: 'list', id: `list${r.kind}ForAllNamespaces`, gvk, returns: listName, params: LIST });
    out[`${prefix}/${r.plural}`] = { parameters: [PRETTY], get: op };
  }
  return out;
}

/** All path items of a group-version, keyed by URL template. */
export function pathsFor(gv: GroupVersionResources): Record<string, Schema> {
  const prefix = gv.group === '' ? `/api/${gv.version}` : `/apis/${gv.group}/${gv.version}`;
  return Object.assign({}, ...gv.resources.map((r) => resourcePaths(r, prefix))) as Record<string, Schema>;
}
