/**
 * Strategic merge patch (application/strategic-merge-patch+json): a JSON merge patch in which
 * lists tagged `patchStrategy: merge` are merged by their `patchMergeKey` (or as sets, for lists
 * of scalars) and the `$patch`, `$retainKeys`, `$deleteFromPrimitiveList/<f>` and
 * `$setElementOrder/<f>` directives apply. Semantics follow apimachinery's strategicpatch with
 * the options the API server uses (parallel lists merged, unmatched nulls ignored).
 * The original is modified in place: callers pass a copy.
 */
import { errors } from '../http/errors.js';
import type { ListStrategy, PatchSchema } from './merge-keys.js';
import { SMP_ERRORS, smpError } from './patch-errors.js';
import { isRecord } from '../../lib/json.js';

type Obj = Record<string, unknown>;
type ListSchema = ListStrategy & { items?: PatchSchema };

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_PREFIX = '$deleteFromPrimitiveList/';
const ORDER_PREFIX = '$setElementOrder/';
/**
 * A field patched with null, or a map patched with `$patch: delete`: its key disappears from the parent.
 * (Upstream's map-level result is an empty map, which the typed object's omitempty then drops.)
 */
const DELETED = Symbol('deleted');

const isDirectiveKey = (k: string): boolean =>
  k === DIRECTIVE || k === RETAIN_KEYS || k.startsWith(DELETE_PREFIX) || k.startsWith(ORDER_PREFIX);

/** A merge key (or scalar) as a map key: JSON text, so 1 and "1" stay distinct. */
const keyString = (v: unknown): string => (v === undefined ? 'undefined' : JSON.stringify(v));

/** First index of each key in a list. */
function indexByKey(list: unknown[], keyOf: (v: unknown) => unknown): Map<string, number> {
  const index = new Map<string, number>();
  list.forEach((v, i) => {
    const k = keyString(keyOf(v));
    if (!index.has(k)) index.set(k, i);
  });
  return index;
}

/** Applies `patch` to `original` (both JSON objects). Throws 400/422 ApiErrors as upstream. */
export function strategicMergePatch(original: Obj, patch: Obj, schema: PatchSchema | undefined): Obj {
  const out = mergeMap(original, patch, schema);
  return out === DELETED ? {} : out;
}

function mergeMap(original: Obj, patch: Obj, schema: PatchSchema | undefined): Obj | typeof DELETED {
  const directive = mapDirective(patch);
  if (directive === 'delete') return DELETED;
  if (directive === 'replace') return mergeMap({}, withoutDirective(patch), schema);
  applyRetainKeys(original, patch);
  applyDeleteLists(original, patch);
  for (const [k, v] of Object.entries(patch)) {
    if (isDirectiveKey(k)) continue;
    const merged = v === null ? DELETED : mergeValue(original[k], v, schema?.fields?.[k], schema?.lists?.[k], orderOf(patch, k));
    if (merged === DELETED) delete original[k];
    else original[k] = merged;
  }
  applyOrderOnlyLists(original, patch, schema);
  return original;
}

/** A map's `$patch`: delete, replace, or (absent or `merge`) an ordinary merge. */
function mapDirective(patch: Obj): 'delete' | 'replace' | undefined {
  if (!(DIRECTIVE in patch)) return undefined;
  const directive = patch[DIRECTIVE];
  if (directive === 'delete' || directive === 'replace') return directive;
  if (directive === 'merge') return undefined;
  throw errors.badRequest(`unknown patch type: ${String(directive)} in map: ${JSON.stringify(patch)}`);
}

/** `$deleteFromPrimitiveList/<f>`: removes values from a scalar list, before the patch's own items merge. */
function applyDeleteLists(original: Obj, patch: Obj): void {
  for (const [k, v] of Object.entries(patch)) {
    if (!k.startsWith(DELETE_PREFIX)) continue;
    if (!Array.isArray(v)) throw smpError(SMP_ERRORS.badPrimitiveList);
    const field = k.slice(DELETE_PREFIX.length);
    const current = original[field];
    const drop = new Set(v.map(keyString));
    if (Array.isArray(current)) original[field] = current.filter((x) => !drop.has(keyString(x)));
  }
}

/** `$setElementOrder/<f>` for a list the patch does not otherwise touch: only reorders it. */
function applyOrderOnlyLists(original: Obj, patch: Obj, schema: PatchSchema | undefined): void {
  for (const [k, v] of Object.entries(patch)) {
    if (!k.startsWith(ORDER_PREFIX)) continue;
    if (!Array.isArray(v)) throw smpError(SMP_ERRORS.badSetElementOrder);
    const field = k.slice(ORDER_PREFIX.length);
    const current = original[field];
    const list = schema?.lists?.[field];
    if (!(field in patch) && Array.isArray(current) && list?.strategy === 'merge') {
      original[field] = mergeList(current, [], list, v);
    }
  }
}

function withoutDirective(patch: Obj): Obj {
  const rest = { ...patch };
  delete rest[DIRECTIVE];
  return rest;
}

function orderOf(patch: Obj, field: string): unknown[] | undefined {
  const order = patch[ORDER_PREFIX + field];
  return Array.isArray(order) ? order : undefined;
}

/** `$retainKeys`: keys of the original not listed are cleared; the patch may only set listed keys. */
function applyRetainKeys(original: Obj, patch: Obj): void {
  if (!(RETAIN_KEYS in patch)) return;
  const keys = patch[RETAIN_KEYS];
  if (!Array.isArray(keys)) throw smpError(SMP_ERRORS.badRetainKeys);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || isDirectiveKey(k)) continue;
    if (!keys.includes(k)) throw smpError(SMP_ERRORS.retainKeysMismatch);
  }
  for (const k of Object.keys(original)) if (!keys.includes(k)) delete original[k];
}

function mergeValue(
  original: unknown,
  patch: unknown,
  schema: PatchSchema | undefined,
  list: ListSchema | undefined,
  order: unknown[] | undefined,
): unknown {
  if (isRecord(patch)) return mergeMap(isRecord(original) ? original : {}, patch, schema);
  if (!Array.isArray(patch)) return patch;
  if (list?.strategy !== 'merge') return patch;
  return mergeList(Array.isArray(original) ? original : [], patch, list, order);
}

/** Element type check (sliceElementType): no lists of lists, no mixed maps and scalars. */
function elementKind(...lists: unknown[][]): 'map' | 'scalar' | undefined {
  let kind: 'map' | 'scalar' | undefined;
  for (const list of lists) {
    for (const v of list) {
      if (Array.isArray(v)) throw smpError(SMP_ERRORS.noListOfLists);
      const k = isRecord(v) ? 'map' : 'scalar';
      if (kind && kind !== k) throw errors.badRequest('list element types are not identical');
      kind = k;
    }
  }
  return kind;
}

function mergeList(original: unknown[], patch: unknown[], list: ListSchema, order: unknown[] | undefined): unknown[] {
  const kind = elementKind(original, patch);
  if (kind === undefined) return original;
  if (kind === 'scalar') {
    if (order) checkOrder(patch, patch, order, (v) => v);
    const merged = [...new Set([...original, ...patch])];
    return normalizeOrder(merged, order ?? patch, original, (v) => v);
  }
  const mergeKey = list.mergeKey;
  if (!mergeKey) throw errors.badRequest('cannot merge lists without merge key');
  const keyOf = (v: unknown): unknown => (isRecord(v) ? v[mergeKey] : undefined);
  const { remaining, items, replace } = specialElements(original, patch, mergeKey);
  if (order) checkOrder(items, patch, order, keyOf);
  if (replace) return items.map((p) => mergeMap({}, p, list.items));
  const merged = [...remaining];
  const position = indexByKey(merged, keyOf);
  for (const p of items) {
    if (!(mergeKey in p)) {
      throw errors.badRequest(`map: ${JSON.stringify(p)} does not contain declared merge key: ${mergeKey}`);
    }
    const at = position.get(keyString(p[mergeKey]));
    const base = at !== undefined && isRecord(merged[at]) ? (merged[at] as Obj) : {};
    const value = mergeMap(base, p, list.items);
    if (value === DELETED) continue;
    if (at !== undefined) merged[at] = value;
    else position.set(keyString(p[mergeKey]), merged.push(value) - 1);
  }
  return normalizeOrder(merged, order ?? items, remaining, keyOf);
}

/**
 * validatePatchWithSetOrderList: the patch's items (deletions aside) must appear in `$setElementOrder`
 * in the same relative order; 400 with upstream's text otherwise.
 */
function checkOrder(items: unknown[], patch: unknown[], order: unknown[], keyOf: (v: unknown) => unknown): void {
  let i = 0;
  for (let j = 0; i < items.length && j < order.length; j++) {
    if (keyString(keyOf(items[i])) === keyString(keyOf(order[j]))) i++;
  }
  if (i < items.length) {
    throw errors.badRequest(`the order in patch list:\n${goValue(patch)}\n doesn't match $setElementOrder list:\n${goValue(order)}`);
  }
}

/** Go's `%v` of a decoded JSON value: `[a b]`, `map[k:v]` with sorted keys, `<nil>`. */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (isRecord(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goValue(v[k])}`).join(' ')}]`;
  return String(v);
}

/** `$patch` elements of a merge list: delete-by-key, replace-the-list; `merge` is a no-op. */
function specialElements(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
): { remaining: unknown[]; items: Obj[]; replace: boolean } {
  let remaining = original;
  let replace = false;
  const items: Obj[] = [];
  for (const p of patch as Obj[]) {
    if (!(DIRECTIVE in p)) {
      items.push(p);
      continue;
    }
    const directive = p[DIRECTIVE];
    if (directive === 'delete') {
      if (!(mergeKey in p)) {
        throw errors.badRequest(`map: ${JSON.stringify(p)} does not contain declared merge key: ${mergeKey}`);
      }
      const drop = keyString(p[mergeKey]);
      remaining = remaining.filter((e) => !(isRecord(e) && keyString(e[mergeKey]) === drop));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive !== 'merge') {
      throw errors.badRequest(`unknown patch type: ${String(directive)} in map: ${JSON.stringify(p)}`);
    }
  }
  return { remaining, items, replace };
}

/**
 * normalizeElementOrder: items named by the patch (or its $setElementOrder list) come in that
 * order; server-only items keep their relative order and are interleaved by their position in
 * the original list. A patch item the server never had sorts ahead of server-only items, as upstream.
 */
function normalizeOrder(
  merged: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  keyOf: (v: unknown) => unknown,
): unknown[] {
  const patchIndex = indexByKey(patchOrder, keyOf);
  const serverIndex = indexByKey(serverOrder, keyOf);
  const indexIn = (index: Map<string, number>, v: unknown): number => index.get(keyString(keyOf(v))) ?? -1;
  const patchItems: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const m of merged) (indexIn(patchIndex, m) >= 0 ? patchItems : serverOnly).push(m);
  const byIndex = (index: Map<string, number>) => (a: unknown, b: unknown) => indexIn(index, a) - indexIn(index, b);
  patchItems.sort(byIndex(patchIndex));
  serverOnly.sort(byIndex(serverIndex));
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < patchItems.length) {
    if (j >= patchItems.length) out.push(serverOnly[i++]);
    else if (i >= serverOnly.length) out.push(patchItems[j++]);
    else {
      const li = indexIn(serverIndex, serverOnly[i]);
      const ri = indexIn(serverIndex, patchItems[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(serverOnly[i++]);
      else out.push(patchItems[j++]);
    }
  }
  return out;
}
