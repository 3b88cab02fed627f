/**
 * @kubernetes/client-node's model classes, read as the JSON the API server decodes and stores.
 * Two differences from the models: date-time fields are RFC 3339 strings (the client's
 * deserializer makes them Dates), and every field may be absent, as in Go, where an absent field is
 * the zero value and `required` is validation's word, not the decoder's.
 */

/** A model (or any part of one) as JSON: dates as strings, every field optional, at every depth. */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer Item)[]
    ? Wire<Item>[]
    : T extends object
      ? { [K in keyof T]?: Wire<T[K]> }
      : T;

/**
 * A model whose fields `K` the served schema keeps free-form (any JSON value is stored there, so
 * nothing may be assumed of their shape): they read as unknown.
 */
export type FreeForm<T, K extends keyof T> = Omit<T, K> & { [P in K]?: unknown };
