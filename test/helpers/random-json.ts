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
  return { pick, value };
}
