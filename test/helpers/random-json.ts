import type { Schema } from '../../src/apiserver/openapi/builder.js';

/** A struct with every kind of field a walk distinguishes: keyed, set and atomic lists, atomic and free maps. */
const item: Schema = { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' }, sub: { type: 'object' } } };
export const FIELD_KINDS_SCHEMA: Schema = {
  type: 'object',
  properties: {
    keyed: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name', 'port'], items: item },
    set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    atomic: { type: 'array', items: { type: 'string' } },
    sealed: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
    free: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

/**
 * Random JSON-like values for property tests of the field-set code: scalars, short lists and objects
 * whose keys come from a small set (so two values often share fields), nested at most four deep.
 * Some object fields are `undefined`, which JSON drops and the field-set walks must skip.
 */
export function randomJson(random: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const scalar = (): unknown => pick(['a', 'b', 1, 2, true, null]);
  const value = (depth: number): unknown => {
    const r = random();
    if (depth > 3 || r < 0.3) return scalar();
    if (r < 0.45) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
    const out: Record<string, unknown> = {};
    for (let i = Math.floor(random() * 4); i > 0; i--) out[pick(['name', 'port', 'sub', 'a', 'b'])] = random() < 0.1 ? undefined : value(depth + 1);
    return out;
  };
  /** A value for FIELD_KINDS_SCHEMA's field `name` (any other name gets a free value). */
  const field = (name: string): unknown => {
    if (name === 'keyed') return Array.from({ length: Math.floor(random() * 5) }, () => ({ name: pick(['x', 'y', undefined]), port: pick([1, 2]), sub: value(2) }));
    if (name === 'set') return Array.from({ length: Math.floor(random() * 4) }, () => pick(['a', 'b', 'c']));
    return value(1);
  };
  return { pick, value, field };
}
