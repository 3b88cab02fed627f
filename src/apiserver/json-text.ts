/**
 * Compact JSON text of the objects the store hands out. A stored object is immutable (the stores
 * deep-freeze it), and one write's result is sent as the response, to every watcher and again to
 * the GETs that follow: one stringification serves them all. Only frozen values are remembered
 * (nothing else in the server freezes objects), and only the most recent ones, so memory stays bounded.
 */
const LIMIT = 1024;
const texts = new Map<object, string>();

/** `JSON.stringify(value)`, remembered for frozen objects. */
export function compactJson(value: unknown): string {
  if (value === null || typeof value !== 'object' || !Object.isFrozen(value)) return JSON.stringify(value);
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    if (texts.size >= LIMIT) texts.delete(texts.keys().next().value as object);
    texts.set(value, text);
  }
  return text;
}
