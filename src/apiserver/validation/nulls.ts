/**
 * JSON `null` in a body field, as Go's decoder reads it into a typed object: the field stays at its
 * zero value, which the API omits. Clients that serialize absent optional fields as null (several
 * generated clients do) would otherwise store and echo nulls, and trip code that expects a list or
 * a map where the field is present.
 */

/** Removes null-valued fields from every object in `root` (array items are left as they are). Iterative. */
export function dropNullFields(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const item of v) if (item !== null && typeof item === 'object') stack.push(item);
      continue;
    }
    const obj = v as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      const item = obj[key];
      if (item === null) delete obj[key];
      else if (typeof item === 'object') stack.push(item);
    }
  }
}
