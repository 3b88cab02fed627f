/**
 * Compact JSON text of frozen objects, such as the ones the API server's store hands out. A stored
 * object is immutable, and one write's result is sent as the response, to every watcher and again
 * to the GETs that follow: one text serves them all. The store parses each object from the text it
 * writes and hands that text over (`rememberJson`), so a stored object is never stringified at all.
 * Only frozen values are remembered, each for as long as the value itself lives (on it, or in a WeakMap): a GET
 * of any stored object reuses its text, where a memo of the most recent 1,024 texts missed on every
 * read of a larger collection (9 µs of JSON.stringify per GET of a ConfigMap). The price is the
 * text beside each stored object, about the size of its JSON.
 */
const texts = new WeakMap<object, string>();

/**
 * Where a stored object carries its text: a property of its own, so the store's writes cost no
 * WeakMap entry (an insert into a table as large as the store, and an ephemeron for every young
 * collection to trace). Not enumerable, so no spread, key walk, JSON or structured clone copies it.
 */
const TEXT = Symbol('json text');

/**
 * Records that `text` is `JSON.stringify(value)` for `value`, which is deep-frozen, or is deep-frozen
 * unchanged right after this call: the store remembers each write's text on the object itself before
 * freezing it. An object frozen already keeps its text in the WeakMap.
 */
export function rememberJson(value: object, text: string): void {
  if (Object.isExtensible(value)) Object.defineProperty(value, TEXT, { value: text });
  else texts.set(value, text);
}

const rememberedJson = (value: object): string | undefined => (value as { [TEXT]?: string })[TEXT] ?? texts.get(value);

/** `JSON.stringify(value)`, remembered for frozen objects. */
export function compactJson(value: unknown): string {
  if (value === null || typeof value !== 'object' || !Object.isFrozen(value)) return JSON.stringify(value);
  let text = rememberedJson(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    rememberJson(value, text);
  }
  return text;
}
