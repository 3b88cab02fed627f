/**
 * A set of field paths in the FieldsV1 shape managedFields use: a tree whose edges are path
 * elements (`f:name` a field, `k:{"name":"x"}` a keyed list item, `v:"a"` a set member, `i:0` an
 * index) and whose nodes are members of the set or only lead to members (`.` marks a member
 * that also has children).
 */

export class FieldSet {
  member = false;
  readonly children = new Map<string, FieldSet>();

  /** The child node under an element, created when missing. */
  private child(el: string): FieldSet {
    let next = this.children.get(el);
    if (!next) {
      next = new FieldSet();
      this.children.set(el, next);
    }
    return next;
  }

  /** Adds the path (a list of element keys) as a member. */
  insert(path: readonly string[]): void {
    path.reduce<FieldSet>((node, el) => node.child(el), this).member = true;
  }

  /** The node at a path, if the set has one there (member or not). */
  at(path: readonly string[]): FieldSet | undefined {
    return path.reduce<FieldSet | undefined>((node, el) => node?.children.get(el), this);
  }

  has(path: readonly string[]): boolean {
    return this.at(path)?.member ?? false;
  }

  isEmpty(): boolean {
    return !this.member && this.children.size === 0;
  }

  /** Every member path, depth first, in insertion order. */
  paths(prefix: string[] = []): string[][] {
    const out: string[][] = this.member ? [prefix] : [];
    for (const [el, child] of this.children) out.push(...child.paths([...prefix, el]));
    return out;
  }

  union(other: FieldSet): FieldSet {
    const out = this.clone();
    for (const p of other.paths()) out.insert(p);
    return out;
  }

  /** The members of this set that `other` does not have (nodes that lead to none are left out). */
  difference(other: FieldSet | undefined): FieldSet {
    const out = new FieldSet();
    out.member = this.member && !other?.member;
    for (const [el, child] of this.children) {
      const rest = child.difference(other?.children.get(el));
      if (!rest.isEmpty()) out.children.set(el, rest);
    }
    return out;
  }

  clone(): FieldSet {
    const out = new FieldSet();
    out.member = this.member;
    for (const [el, child] of this.children) out.children.set(el, child.clone());
    return out;
  }

  /** The FieldsV1 JSON of this set. */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (this.member && this.children.size > 0) out['.'] = {};
    for (const [el, child] of this.children) out[el] = child.toFieldsV1();
    return out;
  }

  static fromFieldsV1(json: unknown): FieldSet {
    const set = new FieldSet();
    const fill = (node: FieldSet, value: unknown): void => {
      if (!value || typeof value !== 'object') return;
      const entries = Object.entries(value as Record<string, unknown>);
      for (const [el, v] of entries) {
        if (el === '.') {
          node.member = true;
          continue;
        }
        const child = new FieldSet();
        fill(child, v);
        // A leaf (`{}`) is a member; an inner node is one only when it says so with `.`.
        if (child.children.size === 0) child.member = true;
        node.children.set(el, child);
      }
    };
    fill(set, json);
    return set;
  }
}

/** The element key of a field. */
export const fieldKey = (name: string): string => `f:${name}`;

/** The element key of a list item identified by its map keys (sorted, as upstream serializes them). */
export function itemKey(item: Record<string, unknown>, keys: readonly string[]): string {
  const k: Record<string, unknown> = {};
  for (const name of [...keys].sort()) if (item[name] !== undefined) k[name] = item[name];
  return `k:${JSON.stringify(k)}`;
}

/** The element key of a set-list member. */
export const valueKey = (value: unknown): string => `v:${JSON.stringify(value)}`;

function goValue(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

/** A path as structured-merge-diff prints it: `.metadata.labels.app`, `.items[name="x"].a`, `[="v"]`. */
export function pathString(path: readonly string[]): string {
  let out = '';
  for (const el of path) {
    const body = el.slice(2);
    if (el.startsWith('f:')) out += `.${body}`;
    else if (el.startsWith('k:')) {
      const key = JSON.parse(body) as Record<string, unknown>;
      out += `[${Object.entries(key)
        .map(([k, v]) => `${k}=${goValue(v)}`)
        .join(',')}]`;
    } else if (el.startsWith('v:')) out += `[=${goValue(JSON.parse(body))}]`;
    else out += `[${body}]`;
  }
  return out;
}
