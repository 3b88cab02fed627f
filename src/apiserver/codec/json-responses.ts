/**
 * Compact JSON of responses built from the encodings of the stored objects they carry, as upstream's
 * watch cache serves them (cachingObject): an object version is encoded once, and that text is
 * spliced into every GET, every LIST page and every watch event that carries it.
 *
 * What keeps a cached text from being served for anything else:
 * - it is kept per object, and only for frozen objects (lib/frozen-json.ts): a stored object never
 *   changes, and its next version is another object with its own text;
 * - each representation is its own text: the object itself, its PartialObjectMetadata (per
 *   meta.k8s.io version), a watch event line (per event type and representation). Pretty and YAML
 *   output, and Tables (whose cells age with the clock), are encoded per request;
 * - a response carries the object as stored, whoever asks: nothing in it depends on the caller, so a
 *   text shared between callers shows each of them only what authorization already let them read.
 *
 * Every function returns exactly what JSON.stringify of the same value gives.
 */
import type { KObject, WatchEventType } from '../../api/meta.js';
import { compactJson } from '../../lib/frozen-json.js';

/**
 * A list as kube-apiserver encodes its typed lists: the items' TypeMeta is empty, so they carry no
 * `kind` or `apiVersion` (the list's own say what they are). A single object and a watch event's
 * object keep theirs.
 */
export function listValue<L extends { readonly items: readonly unknown[] }>(list: L): L {
  return { ...list, items: list.items.map(untyped) };
}

/** `item` without kind and apiVersion (itself when it has neither). */
function untyped(item: unknown): unknown {
  if (!isTyped(item)) return item;
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = item;
  return rest;
}

const isTyped = (item: unknown): item is { kind?: unknown; apiVersion?: unknown } =>
  item !== null && typeof item === 'object' && ('kind' in item || 'apiVersion' in item);

/** `JSON.stringify(listValue(list))`, its items spliced in from their own (remembered) texts. */
export function listJson(list: { readonly items: readonly unknown[] }): string {
  return withItems(list, list.items, itemJson);
}

/** Item texts of stored objects whose kind and apiVersion are not where `itemJson` cuts them off: encoded once. */
const untypedTexts = new WeakMap<object, string>();
/** Where `itemJson` finds the type fields, for the last kind and apiVersion seen (a list's items share them). */
let cuts = { kind: '', apiVersion: '', heads: [] as string[], tail: '' };

/**
 * `JSON.stringify(untyped(item))`. A stored object's text mostly opens with its apiVersion and kind,
 * in the order clients send them (kubectl, client-node and the Python client: apiVersion first), or
 * ends with them, where the server adds them to a body without: the item's text is then the rest of
 * it, and no object is encoded again for its list.
 */
function itemJson(item: unknown): string {
  const text = compactJson(item);
  if (!isTyped(item)) return text;
  const { kind, apiVersion } = item;
  if (typeof kind === 'string' && typeof apiVersion === 'string') {
    if (cuts.kind !== kind || cuts.apiVersion !== apiVersion) {
      const k = `"kind":${JSON.stringify(kind)}`;
      const v = `"apiVersion":${JSON.stringify(apiVersion)}`;
      cuts = { kind, apiVersion, heads: [`{${v},${k}`, `{${k},${v}`], tail: `,${v},${k}}` };
    }
    for (const head of cuts.heads) {
      // The head ends with a string's closing quote: what follows is the next key's comma or the end.
      if (text.startsWith(head)) return text.length === head.length + 1 ? '{}' : `{${text.slice(head.length + 1)}`;
    }
    // Only a top-level key ends the text: its closing brace follows.
    if (text.endsWith(cuts.tail)) return `${text.slice(0, -cuts.tail.length)}}`;
  }
  if (!Object.isFrozen(item)) return JSON.stringify(untyped(item));
  let untypedText = untypedTexts.get(item);
  if (untypedText === undefined) untypedTexts.set(item, (untypedText = JSON.stringify(untyped(item))));
  return untypedText;
}

/** `JSON.stringify(partialObject(obj, metaVersion))`, from the text of the object's (frozen) metadata. */
export function partialObjectJson(obj: KObject, metaVersion: string): string {
  return `{"kind":"PartialObjectMetadata","apiVersion":${JSON.stringify(`meta.k8s.io/${metaVersion}`)},"metadata":${compactJson(obj.metadata ?? {})}}`;
}

/** `JSON.stringify` of a PartialObjectMetadataList of `list`'s items. */
export function partialListJson(list: { readonly metadata: unknown; readonly items: readonly KObject[] }, metaVersion: string): string {
  const head = { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${metaVersion}`, metadata: list.metadata, items: list.items };
  return withItems(head, list.items, (o) => partialObjectJson(o, metaVersion));
}

/**
 * JSON.stringify of an object whose `items` are encoded by `encode` (keys in the object's order). The
 * items' text is built by concatenation, which V8 keeps as a rope until the response is written and
 * copies once then, where a join copies every item twice.
 */
function withItems<T>(value: object, items: readonly T[], encode: (item: T) => string): string {
  const parts: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    let text: string | undefined;
    if (key === 'items') {
      text = '[';
      for (let i = 0; i < items.length; i++) text += (i === 0 ? '' : ',') + encode(items[i] as T);
      text += ']';
    } else text = JSON.stringify(v) as string | undefined;
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

/** How a watch's events carry their object. */
export type EventRepresentation = { kind: 'object' } | { kind: 'partial'; metaVersion: string };

/**
 * Event lines built in this turn of the event loop, by object: a write reaches every watcher of its
 * key in the same turn (the watch hub delivers in one microtask), so N watchers of one
 * representation share one line instead of encoding the event N times. Forgotten at the end of the
 * turn, so no line outlives its delivery.
 */
const turnLines = new Map<object, Map<string, string>>();
let forgetScheduled = false;

function forgetTurn(): void {
  turnLines.clear();
  forgetScheduled = false;
}

/**
 * One watch event as a line of the stream: `JSON.stringify({ type, object: representation of obj }) + '\n'`,
 * shared with the other watchers of the event in this turn.
 */
export function eventLine(type: WatchEventType, obj: KObject, representation: EventRepresentation): string {
  if (!Object.isFrozen(obj)) return encodeLine(type, obj, representation);
  const key = representation.kind === 'object' ? type : `${type} ${representation.metaVersion}`;
  let lines = turnLines.get(obj);
  let line = lines?.get(key);
  if (line !== undefined) return line;
  line = encodeLine(type, obj, representation);
  if (!lines) turnLines.set(obj, (lines = new Map()));
  lines.set(key, line);
  if (!forgetScheduled) {
    forgetScheduled = true;
    setImmediate(forgetTurn);
  }
  return line;
}

/**
 * The same line, not kept for other watchers: a watch's initial events (the current state, or the
 * history a resumed watch replays) are its own, and keeping a whole list's lines to the end of the
 * turn would hold a second copy of it.
 */
export function encodeLine(type: WatchEventType, obj: KObject, representation: EventRepresentation): string {
  return textLine(type, representation.kind === 'object' ? compactJson(obj) : partialObjectJson(obj, representation.metaVersion));
}

/** The event line of an object whose JSON is `text` (a store's relayed event carries it: StoreEvent.text). */
export function textLine(type: WatchEventType, text: string): string {
  return `{"type":${JSON.stringify(type)},"object":${text}}\n`;
}
