/**
 * LIST with upstream's resourceVersion semantics and snapshot-consistent pagination: every page
 * of a paginated list is read at the revision of the first page, carried in an opaque continue
 * token (continue-token.ts), as kube-apiserver's etcd3 store does.
 */
import type { KList, KObject, Status } from '../../../api/meta.js';
import { apiVersionOf } from '../../../api/resources.js';
import { ApiError, errors } from '../../http/errors.js';
import { type StoredObject, StoreError } from '../../storage/store.js';
import type { GenericRegistry } from './registry.js';
import type { Selection } from './selection.js';
import type { ListOptions } from './types.js';
import { type ContinueToken, decodeContinue, encodeContinue } from './continue-token.js';

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';
/** How long a read "not older than N" waits for the store to reach N (upstream: ~3 s). */
const TOO_LARGE_WAIT_MS = 3000;

/** 410 for a compacted continue token, carrying a fresh "latest" token as upstream does. */
class ContinueExpired extends ApiError {
  constructor(private readonly fresh: string) {
    super(410, 'Expired', CONTINUE_EXPIRED, {});
  }
  override toStatus(): Status {
    const s = super.toStatus();
    s.metadata = { continue: this.fresh };
    return s;
  }
}

/** Waits (briefly) until the store has reached `rv`; 504 "Too large resource version" otherwise. */
export async function waitForRevision(registry: GenericRegistry, rv: number): Promise<void> {
  const deadline = Date.now() + TOO_LARGE_WAIT_MS;
  while (registry.store.currentRevision() < rv) {
    if (Date.now() >= deadline) {
      const e = errors.timeout(`Too large resource version: ${rv}, current: ${registry.store.currentRevision()}`, 1);
      if (e.details) e.details.causes = [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }];
      throw e;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Page {
  items: KObject[];
  revision: number;
  lastKey?: string;
  remaining: number;
}

async function readPage(
  registry: GenericRegistry,
  prefix: string,
  selection: Selection,
  limit: number,
  start: { after?: string; revision?: number },
): Promise<Page> {
  const items: KObject[] = [];
  let after = start.after;
  let revision = start.revision;
  for (;;) {
    const res = await registry.store.range({ prefix, after, limit, revision });
    revision = res.revision;
    const chunk: StoredObject[] = res.items;
    for (let i = 0; i < chunk.length; i++) {
      const item = chunk[i] as StoredObject;
      if (!selection.matches(item.object)) continue;
      items.push(item.object);
      if (limit > 0 && items.length === limit) {
        const more = i < chunk.length - 1 || res.remaining > 0;
        const remaining = selection.empty ? chunk.length - 1 - i + res.remaining : 1;
        return more ? { items, revision, lastKey: item.key, remaining } : { items, revision, remaining: 0 };
      }
    }
    if (limit === 0 || res.remaining === 0 || chunk.length === 0) return { items, revision, remaining: 0 };
    after = chunk[chunk.length - 1]?.key;
  }
}

/**
 * The one key a `metadata.name=` field selector names, as upstream's ListPredicate reads it alone
 * (MatchesSingle) instead of testing every object of the collection: each kubelet's informer on its
 * own Node lists with it, so a fleet's joins would otherwise cost a scan of every Node each. Not on
 * a continued list, nor across namespaces (the name alone is no key there), as upstream.
 */
function singleKey(registry: GenericRegistry, namespace: string | undefined, selection: Selection): string | undefined {
  const name = selection.exact('metadata.name');
  if (name === undefined || (registry.info.namespaced && namespace === undefined)) return undefined;
  return registry.key(namespace, name);
}

/** That key's object when it matches the whole selection: at most one item, never a continue token. */
async function readKey(registry: GenericRegistry, key: string, selection: Selection, revision: number | undefined): Promise<Page> {
  // A range under the key reads it at the revision asked for and names the revision it was read at;
  // the key sorts before every longer key it prefixes, so one item is enough.
  const res = await registry.store.range({ prefix: key, limit: 1, revision });
  const item = res.items.find((i) => i.key === key);
  return { items: item && selection.matches(item.object) ? [item.object] : [], revision: res.revision, remaining: 0 };
}

function translate(e: unknown, token?: { start: string }): never {
  if (e instanceof StoreError && e.code === 'Compacted') {
    if (token) throw new ContinueExpired(encodeContinue(-1, token.start));
    throw errors.expired('The resourceVersion for the provided list is too old.');
  }
  throw e;
}

export async function listObjects(
  registry: GenericRegistry,
  namespace: string | undefined,
  opts: ListOptions,
  selection: Selection,
): Promise<KList> {
  const prefix = registry.prefix(namespace);
  let limit = opts.limit;
  let after: string | undefined;
  let revision: number | undefined;
  let token: ContinueToken | undefined;
  if (opts.continue !== '') {
    token = decodeContinue(opts.continue);
    after = prefix + (token.start.endsWith('\u0000') ? token.start.slice(0, -1) : token.start);
    if (token.rv > 0) revision = token.rv;
  } else if (opts.resourceVersion === '0') {
    limit = 0;
  } else if (opts.resourceVersion !== '') {
    const rv = Number(opts.resourceVersion);
    const exact = opts.resourceVersionMatch === 'Exact' || (opts.resourceVersionMatch === '' && limit > 0);
    await waitForRevision(registry, rv);
    if (exact) revision = rv;
  }
  const key = token ? undefined : singleKey(registry, namespace, selection);
  let page: Page;
  try {
    page = key === undefined ? await readPage(registry, prefix, selection, limit, { after, revision }) : await readKey(registry, key, selection, revision);
  } catch (e) {
    translate(e, token);
  }
  const list: KList = {
    apiVersion: apiVersionOf(registry.info),
    kind: registry.info.listKind,
    metadata: { resourceVersion: String(page.revision) },
    items: page.items,
  };
  if (page.lastKey !== undefined) {
    list.metadata.continue = encodeContinue(page.revision, `${page.lastKey.slice(prefix.length)}\u0000`);
    if (selection.empty) list.metadata.remainingItemCount = page.remaining;
  }
  return list;
}
