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

/** `JSON.stringify(list)` of a list whose items are spliced in from their own (remembered) texts. */
export function listJson(list: { readonly items: readonly unknown[] }): string {
  return withItems(list, list.items.map((item) => compactJson(item)));
}

/** `JSON.stringify(partialObject(obj, metaVersion))`, from the text of the object's (frozen) metadata. */
export function partialObjectJson(obj: KObject, metaVersion: string): string {
  return `{"kind":"PartialObjectMetadata","apiVersion":${JSON.stringify(`meta.k8s.io/${metaVersion}`)},"metadata":${compactJson(obj.metadata ?? {})}}`;
}

/** `JSON.stringify` of a PartialObjectMetadataList of `list`'s items. */
export function partialListJson(list: { readonly metadata: unknown; readonly items: readonly KObject[] }, metaVersion: string): string {
  const head = { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${metaVersion}`, metadata: list.metadata, items: list.items };
  return withItems(head, list.items.map((o) => partialObjectJson(o, metaVersion)));
}

/** JSON.stringify of an object whose `items` are given as their texts (keys in the object's order). */
function withItems(value: object, items: string[]): string {
  const parts: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const text = key === 'items' ? `[${items.join(',')}]` : (JSON.stringify(v) as string | undefined);
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
