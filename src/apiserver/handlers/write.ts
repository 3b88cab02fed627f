/** POST (create, including computed "virtual" creates), PUT (update) and PATCH. */
import type { KObject } from '../../api/meta.js';
import { errors } from '../http/errors.js';
import { readBody } from '../http/http-io.js';
import { PATCH_TYPES, applyPatch, patchTextProblems } from '../patch/index.js';
import { type Gvk, checkPatchedObject, checkTypeMeta, decodeObject, invalidPatch, mediaType } from './negotiation.js';
import type { VirtualCreate } from '../registry/generic/strategy.js';
import { type RequestScope, respondObject } from './scope.js';
import { checkFieldProblems, fieldProblems, parseWriteParams, type WriteParams } from './write-options.js';
import type { WriteOptions } from '../registry/generic/registry.js';
import { removeUnknownFields } from '../validation/object-decode.js';
import { DecodedBodies } from './decoded-bodies.js';

const APPLY = 'application/apply-patch+yaml';

function gvkOf(scope: RequestScope): Gvk {
  const { info } = scope.registry;
  const sub = scope.info.subresource ? info.subresources?.find((s) => s.name === scope.info.subresource) : undefined;
  return sub ? { group: sub.group, version: sub.version, kind: sub.kind } : { group: info.group, version: info.version, kind: info.kind };
}

/** Bodies remembered per virtual create: a few hundred tokens reviewed over and over, about 3 KB each. */
const DECODED_BODIES = 512;
/** The largest body remembered (a review of a service-account token is 1-3 KB): at most 8 MiB in all. */
const DECODED_BODY_MAX_BYTES = 16 * 1024;

/** The decoded bodies of each virtual create that only reads its body, by the bytes. */
const remembered = new WeakMap<VirtualCreate, DecodedBodies>();

function memoOf(virtual: VirtualCreate): DecodedBodies | undefined {
  if (!virtual.readsBodyOnly) return undefined;
  let memo = remembered.get(virtual);
  if (!memo) remembered.set(virtual, (memo = new DecodedBodies(DECODED_BODIES, DECODED_BODY_MAX_BYTES)));
  return memo;
}

/**
 * The body's bytes decoded, with the request's fieldValidation applied to what the decode found, and
 * a way to decode the same bytes again into a fresh object (the decode is a function of the bytes):
 * warnings and the audit's copy come from the first decode only.
 */
function decodeBody(
  scope: RequestScope,
  body: Buffer,
  fieldValidation: 'Ignore' | 'Warn' | 'Strict',
  memo?: DecodedBodies,
): { object: KObject; again: () => KObject } {
  const gvk = gvkOf(scope);
  const contentType = scope.req.headers['content-type'];
  // Unknown fields are found, and removed, by the decode's walk.
  const decode = () => decodeObject(contentType, body, gvk, { unknownFields: scope.unknownFields });
  const decoded = memo ? memo.decode(body, contentType, scope.unknownFields === true, decode) : decode();
  checkFieldProblems(gvk, fieldProblems(decoded.duplicateFields, decoded.unknownFields), fieldValidation, scope.ctx);
  scope.audit?.requestObject(decoded.object);
  return { object: decoded.object, again: () => decode().object };
}

function virtualFor(scope: RequestScope): VirtualCreate | undefined {
  const { strategy, info } = scope;
  return info.subresource ? strategy.virtualSubresources?.[info.subresource] : strategy.virtual;
}

export async function handleCreate(scope: RequestScope): Promise<void> {
  const params = parseWriteParams(scope.query, 'CreateOptions');
  scope.ctx.dryRun = params.dryRun;
  const virtual = virtualFor(scope);
  if (virtual) {
    const body = decodeBody(scope, await readBody(scope.req), params.fieldValidation, memoOf(virtual)).object;
    const target: { namespace?: string; name?: string } = {};
    if (scope.info.namespace !== undefined) target.namespace = scope.info.namespace;
    if (scope.info.name !== undefined) target.name = scope.info.name;
    if (scope.info.subresource) await scope.registry.admitVirtualCreate(target.namespace, target.name ?? '', scope.info.subresource, body, scope.ctx);
    respondObject(scope, 201, await virtual.create(body, scope.ctx, target));
    return;
  }
  if (!scope.info.collection) throw errors.methodNotAllowed();
  if (scope.registry.info.namespaced && scope.info.namespace === undefined) throw errors.methodNotAllowed();
  const obj = decodeBody(scope, await readBody(scope.req), params.fieldValidation).object;
  // The decoded body is this request's alone (audit keeps its own copy): created without a copy.
  const created = await scope.registry.create(scope.info.namespace, obj, scope.ctx, { ...writeOptions(scope, params), handOver: true });
  respondObject(scope, 201, created);
}

function checkName(obj: KObject, urlName: string): void {
  const meta = (obj.metadata ??= {});
  if (meta.name === undefined || meta.name === '') meta.name = urlName;
  else if (meta.name !== urlName) {
    throw errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${urlName})`);
  }
}

/** The registry's write options from the request's query and headers. */
function writeOptions(scope: RequestScope, params: WriteParams, apply = false): WriteOptions {
  return {
    dryRun: params.dryRun,
    fieldManager: params.fieldManager,
    userAgent: scope.req.headers['user-agent'],
    subresource: scope.info.subresource,
    apply,
  };
}

/**
 * A PUT or apply that creates must also be allowed to `create` (upstream's withAuthorization on
 * their create paths): `update` or `patch` alone does not let a user add objects.
 */
async function authorizeCreate(scope: RequestScope): Promise<void> {
  const { info, ctx } = scope;
  const target = { group: info.apiGroup, resource: info.resource, name: info.name, namespace: info.namespace };
  const decision = await ctx.authorizer.authorize({ user: ctx.user, verb: 'create', apiGroup: info.apiGroup, resource: info.resource, namespace: info.namespace, name: info.name });
  if (!decision.allowed) throw errors.forbidden(target, ctx.user.username, 'create', decision.reason);
}

export async function handleUpdate(scope: RequestScope): Promise<void> {
  const params = parseWriteParams(scope.query, 'UpdateOptions');
  scope.ctx.dryRun = params.dryRun;
  const name = scope.info.name ?? '';
  const body = decodeBody(scope, await readBody(scope.req), params.fieldValidation);
  checkName(body.object, name);
  // Each attempt changes the object it is given (server metadata, managedFields). The first takes the
  // decoded body itself; a retry (a lost compare-and-swap, a stale cached copy), which is rare, decodes
  // the bytes again, instead of every update paying for a copy of the whole body up front.
  let first: KObject | undefined = body.object;
  const pristine = (): KObject => {
    const out = first ?? body.again();
    if (!first) checkName(out, name);
    first = undefined;
    return out;
  };
  const createIfMissing = scope.strategy.allowCreateOnUpdate
    ? async (): Promise<KObject> => {
        await authorizeCreate(scope);
        const fresh = pristine();
        // As upstream's storage, which drops it before writing: a resourceVersion is no precondition on a create.
        delete fresh.metadata?.resourceVersion;
        return fresh;
      }
    : undefined;
  const result = await scope.registry.update(
    scope.info.namespace,
    name,
    scope.ctx,
    writeOptions(scope, params),
    { tryUpdate: pristine, returnsFresh: true, createIfMissing, uid: body.object.metadata?.uid },
  );
  respondObject(scope, result.created ? 201 : 200, result.object);
}

export async function handlePatch(scope: RequestScope): Promise<void> {
  const type = mediaType(scope.req.headers['content-type']);
  if (!PATCH_TYPES.includes(type)) throw errors.unsupportedMediaType([...PATCH_TYPES]);
  const apply = type === APPLY;
  const params = parseWriteParams(scope.query, 'PatchOptions', apply);
  scope.ctx.dryRun = params.dryRun;
  const body = await readBody(scope.req);
  scope.audit?.requestPatch(body);
  const name = scope.info.name ?? '';
  const gvk = gvkOf(scope);
  const applier = apply ? { manager: params.fieldManager ?? '', force: params.force, now: scope.ctx.now, subresource: scope.info.subresource } : undefined;
  // fieldValidation, as upstream's patcher: what the patch's own strict decoding finds, then the
  // patched object's unknown fields in the order its decoder meets them in the patched JSON,
  // which Go writes with sorted keys (apply reports undeclared fields itself).
  const { fieldValidation } = params;
  const textProblems = fieldValidation === 'Ignore' ? [] : patchTextProblems(type, body.toString('utf8'));
  const unknownFields = scope.unknownFields === true && !apply;
  const patched = (current: KObject): KObject => {
    const out = applyPatch(type, current, body, gvk, applier);
    const found = checkPatchedObject(out, gvk, type, { unknownFields });
    const problems = [...textProblems, ...fieldProblems([], [...found.unknownFields].sort())];
    checkFieldProblems(gvk, problems, fieldValidation, scope.ctx, (detail) => invalidPatch(out, detail));
    removeUnknownFields(found);
    checkName(out, name);
    return out;
  };
  const createIfMissing = apply
    ? async (): Promise<KObject> => {
        await authorizeCreate(scope);
        const seed: KObject = { metadata: { name } };
        checkTypeMeta(seed, gvk);
        if (scope.info.namespace !== undefined && scope.registry.info.namespaced) seed.metadata = { name, namespace: scope.info.namespace };
        const out = patched(seed);
        delete out.metadata?.resourceVersion;
        return out;
      }
    : undefined;
  const result = await scope.registry.update(
    scope.info.namespace,
    name,
    scope.ctx,
    writeOptions(scope, params, apply),
    // applyPatch works on a copy of the current object and parses the patch anew each time.
    { tryUpdate: patched, returnsFresh: true, createIfMissing },
  );
  respondObject(scope, result.created ? 201 : 200, result.object);
}
