/**
 * Executes templates parsed by template-parse.ts with Go text/template semantics where the chart
 * relies on them: truthiness (false, 0, "", nil, empty list/map are false), field access that fails
 * on a nil parent ("nil pointer evaluating"), missing map keys printing as "" (Helm's behaviour),
 * `$` bound to the data a template was called with, variables scoped to their control block, and
 * `and`/`or` evaluating lazily and returning an operand.
 */
import { parsePipeline, parseTemplate, type Arg, type Command, type Node, type Pipeline } from './template-parse.js';

export type Value = unknown;

/** A template function; `this` gives access to include/tpl. */
export type TemplateFunc = (this: Engine, ...args: Value[]) => Value;

export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

/** Raised by `fail`/`required`: Helm aborts the whole render with this message. */
export class FailError extends TemplateError {}

interface Scope {
  dot: Value;
  vars: Map<string, Value>[];
}

export function truthy(v: Value): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** Go's %v formatting, as `{{ x }}` prints; nil prints as "" the way Helm renders it. */
export function formatValue(v: Value): string {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return `[${v.map(formatValue).join(' ')}]`;
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, Value>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, x]) => `${k}:${formatValue(x)}`).join(' ')}]`;
  }
  return String(v);
}

export class Engine {
  private readonly templates = new Map<string, Node[]>();

  constructor(private readonly funcs: Record<string, TemplateFunc>) {}

  /** Adds a file: its `define`s become named templates and the file itself is named `name`. */
  add(name: string, src: string): void {
    const parsed = parseTemplate(src, name);
    for (const [n, nodes] of parsed.defines) this.templates.set(n, nodes);
    this.templates.set(name, parsed.root);
  }

  has(name: string): boolean {
    return this.templates.has(name);
  }

  /** Executes the named template with `data` as both `.` and `$`. */
  execute(name: string, data: Value): string {
    const nodes = this.templates.get(name);
    if (!nodes) throw new TemplateError(`template: no template "${name}" associated with template`);
    return this.run(nodes, { dot: data, vars: [new Map([['$', data]])] });
  }

  /** Renders a string as a template (Helm's `tpl`). */
  executeString(src: string, data: Value, name = 'tpl'): string {
    const parsed = parseTemplate(src, name);
    for (const [n, nodes] of parsed.defines) this.templates.set(n, nodes);
    return this.run(parsed.root, { dot: data, vars: [new Map([['$', data]])] });
  }

  /** Evaluates a single pipeline expression against data (tests use it). */
  evaluate(expr: string, data: Value): Value {
    return this.pipeline(parsePipeline(expr, 'expr'), { dot: data, vars: [new Map([['$', data]])] });
  }

  private run(nodes: Node[], scope: Scope): string {
    let out = '';
    for (const node of nodes) out += this.node(node, scope);
    return out;
  }

  private node(node: Node, scope: Scope): string {
    switch (node.kind) {
      case 'text':
        return node.text;
      case 'action': {
        const v = this.pipeline(node.pipe, scope);
        return node.pipe.decl.length > 0 ? '' : formatValue(v);
      }
      case 'template':
        return this.execute(node.name, node.pipe ? this.pipeline(node.pipe, scope) : undefined);
      case 'if':
      case 'with': {
        const inner = this.child(scope, scope.dot);
        const v = this.pipeline(node.pipe, inner);
        if (!truthy(v)) return this.run(node.otherwise, this.child(scope, scope.dot));
        if (node.kind === 'with') inner.dot = v;
        return this.run(node.body, inner);
      }
      case 'range':
        return this.range(node, scope);
    }
  }

  private range(node: Extract<Node, { kind: 'range' }>, scope: Scope): string {
    const inner = this.child(scope, scope.dot);
    const decl = node.pipe.decl;
    const v = this.pipeline({ ...node.pipe, decl: [] }, inner);
    const entries: [Value, Value][] = Array.isArray(v)
      ? v.map((x, i) => [i, x])
      : v !== null && typeof v === 'object'
        ? Object.keys(v).sort().map((k) => [k, (v as Record<string, Value>)[k]])
        : v === undefined || v === null
          ? []
          : (() => {
              throw new TemplateError(`range can't iterate over ${formatValue(v)}`);
            })();
    if (entries.length === 0) return this.run(node.otherwise, this.child(scope, scope.dot));
    let out = '';
    for (const [k, x] of entries) {
      const iter = this.child(scope, x);
      const frame = iter.vars[iter.vars.length - 1] as Map<string, Value>;
      if (decl.length === 1) frame.set(decl[0] as string, x);
      if (decl.length === 2) {
        frame.set(decl[0] as string, k);
        frame.set(decl[1] as string, x);
      }
      out += this.run(node.body, iter);
    }
    return out;
  }

  private child(scope: Scope, dot: Value): Scope {
    return { dot, vars: [...scope.vars, new Map()] };
  }

  private pipeline(pipe: Pipeline, scope: Scope): Value {
    let piped: Value[] = [];
    let value: Value;
    for (const cmd of pipe.cmds) {
      value = this.command(cmd, scope, piped);
      piped = [value];
    }
    if (pipe.decl.length === 1) {
      const name = pipe.decl[0] as string;
      const frame = pipe.assign ? scope.vars.findLast((f) => f.has(name)) : scope.vars[scope.vars.length - 1];
      if (!frame) throw new TemplateError(`undefined variable: ${name}`);
      frame.set(name, value);
    }
    return value;
  }

  private command(cmd: Command, scope: Scope, piped: Value[]): Value {
    const [head, ...rest] = cmd.args as [Arg, ...Arg[]];
    if (head.kind === 'ident') {
      if (head.name === 'and' || head.name === 'or') return this.logic(head.name, rest, scope, piped);
      const fn = this.funcs[head.name];
      if (!fn) throw new TemplateError(`function "${head.name}" not defined`);
      return fn.apply(this, [...rest.map((a) => this.arg(a, scope)), ...piped]);
    }
    const v = this.arg(head, scope);
    if (typeof v === 'function') return (v as (...a: Value[]) => Value)(...rest.map((a) => this.arg(a, scope)), ...piped);
    if (rest.length > 0 || piped.length > 0) throw new TemplateError(`can't give argument to non-function ${formatValue(v)}`);
    return v;
  }

  private logic(op: 'and' | 'or', args: Arg[], scope: Scope, piped: Value[]): Value {
    const thunks: (() => Value)[] = [...args.map((a) => () => this.arg(a, scope)), ...piped.map((p) => () => p)];
    if (thunks.length === 0) throw new TemplateError(`wrong number of args for ${op}: want at least 1 got 0`);
    let v: Value;
    for (const t of thunks) {
      v = t();
      if (op === 'and' ? !truthy(v) : truthy(v)) return v;
    }
    return v;
  }

  private arg(a: Arg, scope: Scope): Value {
    switch (a.kind) {
      case 'literal':
        return a.value;
      case 'dot':
        return walk(scope.dot, a.chain, '.');
      case 'var': {
        const frame = scope.vars.findLast((f) => f.has(a.name));
        if (!frame) throw new TemplateError(`undefined variable: ${a.name}`);
        return walk(frame.get(a.name), a.chain, a.name);
      }
      case 'pipe':
        return walk(this.pipeline(a.pipe, scope), a.chain, '(...)');
      case 'ident':
        return this.command({ args: [a] }, scope, []);
    }
  }
}

/** Field access: a missing key is nil; a field of nil is an error, as in Go. */
function walk(start: Value, chain: string[], root: string): Value {
  let v = start;
  let path = root;
  for (const key of chain) {
    if (v === undefined || v === null) throw new TemplateError(`nil pointer evaluating interface {}.${key} (at ${path})`);
    if (typeof v !== 'object') throw new TemplateError(`can't evaluate field ${key} in type ${typeof v} (at ${path})`);
    const obj = v as Record<string, Value>;
    v = Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
    path = `${path}.${key}`;
  }
  return v;
}
