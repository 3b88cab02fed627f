/**
 * Parser for the subset of Go's text/template that the Helm chart uses (there is no helm binary on
 * the build machines, so the chart check renders templates itself). Supported: text, `{{- -}}` trim
 * markers, comments, actions with pipelines and parenthesised sub-pipelines, `$var :=`/`=`,
 * if/else if/else, range (with `$i, $v :=`), with/else, define, template. Anything else is a parse
 * error rather than a silent misrender, so the chart cannot drift outside what the check understands.
 */

export type Arg =
  | { kind: 'dot'; chain: string[] }
  | { kind: 'var'; name: string; chain: string[] }
  | { kind: 'ident'; name: string }
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'pipe'; pipe: Pipeline; chain: string[] };

export interface Command {
  args: Arg[];
}

export interface Pipeline {
  decl: string[];
  assign: boolean;
  cmds: Command[];
}

export type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipe: Pipeline }
  | { kind: 'if' | 'with'; pipe: Pipeline; body: Node[]; otherwise: Node[] }
  | { kind: 'range'; pipe: Pipeline; body: Node[]; otherwise: Node[] }
  | { kind: 'template'; name: string; pipe: Pipeline | undefined };

export interface Parsed {
  root: Node[];
  defines: Map<string, Node[]>;
}

interface RawAction {
  text: string;
  line: number;
}

type Piece = { kind: 'text'; text: string } | { kind: 'action'; action: RawAction };

/** Splits source into text and action pieces, applying the trim markers. */
function split(src: string, name: string): Piece[] {
  const pieces: Piece[] = [];
  let pos = 0;
  let trimNext = false;
  while (pos < src.length) {
    const open = src.indexOf('{{', pos);
    let text = src.slice(pos, open < 0 ? src.length : open);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (open < 0) {
      pieces.push({ kind: 'text', text });
      break;
    }
    const trimLeft = /^\{\{-[\s]/.test(src.slice(open, open + 4));
    if (trimLeft) text = text.replace(/\s+$/, '');
    pieces.push({ kind: 'text', text });
    const close = findClose(src, open + 2, name);
    const trimRight = /\s-$/.test(src.slice(close - 2, close));
    const body = src.slice(open + (trimLeft ? 3 : 2), trimRight ? close - 2 : close).trim();
    const line = src.slice(0, open).split('\n').length;
    if (!body.startsWith('/*')) pieces.push({ kind: 'action', action: { text: body, line } });
    else if (!body.endsWith('*/')) throw new Error(`template: ${name}:${line}: unclosed comment`);
    trimNext = trimRight;
    pos = close + 2;
  }
  return pieces.filter((p) => p.kind === 'action' || p.text !== '');
}

function findClose(src: string, from: number, name: string): number {
  let quote: string | undefined;
  for (let i = from; i < src.length; i++) {
    const c = src[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === '`') quote = c;
    else if (c === '}' && src[i + 1] === '}') return i;
  }
  throw new Error(`template: ${name}: unclosed action`);
}

const TOKEN = /\s*(?:("(?:[^"\\]|\\.)*")|(`[^`]*`)|(:=|=|\||\(|\)|,)|(-?\d+(?:\.\d+)?)(?![\w.])|(\$[A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)|((?:\.[A-Za-z0-9_]+)+|\.)|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*))/y;

/**
 * Tokens of one action body; each keeps its lexical class as its first character. A field glued to a
 * closing paren, `(x).Field`, is class `c` (a field of the paren's value), not a new operand.
 */
function tokenize(text: string, where: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    if (/^\s*$/.test(text.slice(TOKEN.lastIndex))) break;
    const m = TOKEN.exec(text);
    if (!m) throw new Error(`template: ${where}: unexpected "${text.slice(TOKEN.lastIndex).trim()}" in action`);
    if (m[1] !== undefined) out.push(`s${JSON.parse(m[1]) as string}`);
    else if (m[2] !== undefined) out.push(`s${m[2].slice(1, -1)}`);
    else if (m[3] !== undefined) out.push(`o${m[3]}`);
    else if (m[4] !== undefined) out.push(`n${m[4]}`);
    else if (m[5] !== undefined) out.push(`v${m[5]}`);
    else if (m[6] !== undefined) out.push(`${out[out.length - 1] === 'o)' && !/^\s/.test(m[0]) && m[6] !== '.' ? 'c' : 'd'}${m[6]}`);
    else out.push(`i${m[7] as string}`);
  }
  return out;
}

class PipeParser {
  private i = 0;
  constructor(
    private readonly toks: string[],
    private readonly where: string,
  ) {}

  pipeline(): Pipeline {
    const decl: string[] = [];
    let assign = false;
    const save = this.i;
    while (this.peek()?.startsWith('v') && /^v\$[A-Za-z0-9_]*$/.test(this.peek() as string)) {
      decl.push((this.next() as string).slice(1));
      if (this.peek() === 'o,') this.next();
      else break;
    }
    if (decl.length > 0 && (this.peek() === 'o:=' || this.peek() === 'o=')) {
      assign = this.next() === 'o=';
    } else {
      decl.length = 0;
      this.i = save;
    }
    const cmds: Command[] = [this.command()];
    while (this.peek() === 'o|') {
      this.next();
      cmds.push(this.command());
    }
    return { decl, assign, cmds };
  }

  done(): void {
    if (this.i < this.toks.length) throw new Error(`template: ${this.where}: unexpected ${this.toks[this.i]?.slice(1)}`);
  }

  private command(): Command {
    const args: Arg[] = [];
    for (let t = this.peek(); t !== undefined && t !== 'o|' && t !== 'o)'; t = this.peek()) args.push(this.operand());
    if (args.length === 0) throw new Error(`template: ${this.where}: missing value for command`);
    return { args };
  }

  private operand(): Arg {
    const t = this.next() as string;
    const body = t.slice(1);
    switch (t[0]) {
      case 's':
        return { kind: 'literal', value: body };
      case 'n':
        return { kind: 'literal', value: Number(body) };
      case 'v': {
        const [name, ...chain] = body.split('.');
        return { kind: 'var', name: name as string, chain };
      }
      case 'd':
        return { kind: 'dot', chain: body === '.' ? [] : body.slice(1).split('.') };
      case 'i':
        if (body === 'true' || body === 'false') return { kind: 'literal', value: body === 'true' };
        if (body === 'nil') return { kind: 'literal', value: null };
        return { kind: 'ident', name: body };
      default:
        if (body !== '(') throw new Error(`template: ${this.where}: unexpected "${body}" in operand`);
        return this.paren();
    }
  }

  private paren(): Arg {
    const pipe = this.pipeline();
    if (this.next() !== 'o)') throw new Error(`template: ${this.where}: unclosed left paren`);
    const nextTok = this.peek();
    const chain = nextTok?.startsWith('c.') ? (this.next() as string).slice(2).split('.') : [];
    return { kind: 'pipe', pipe, chain };
  }

  private peek(): string | undefined {
    return this.toks[this.i];
  }

  private next(): string | undefined {
    return this.toks[this.i++];
  }
}

/** Parses a pipeline from an action body (exported for the `tpl` function and tests). */
export function parsePipeline(text: string, where: string): Pipeline {
  const p = new PipeParser(tokenize(text, where), where);
  const pipe = p.pipeline();
  p.done();
  return pipe;
}

const DEFINED = Symbol('defined');

const KEYWORD = /^(if|else|end|range|with|define|template|block|break|continue)\b\s*/;

export function parseTemplate(src: string, name: string): Parsed {
  const pieces = split(src, name);
  const defines = new Map<string, Node[]>();
  let i = 0;

  /** Parses nodes until `end` or `else`; returns which keyword stopped it. */
  const list = (top: boolean): { nodes: Node[]; stop: RawAction | undefined } => {
    const nodes: Node[] = [];
    while (i < pieces.length) {
      const piece = pieces[i++] as Piece;
      if (piece.kind === 'text') {
        nodes.push(piece);
        continue;
      }
      const { text, line } = piece.action;
      const where = `${name}:${line}`;
      const kw = KEYWORD.exec(text)?.[1];
      const rest = text.replace(KEYWORD, '');
      if (kw === 'end' || kw === 'else') {
        if (top) throw new Error(`template: ${where}: unexpected {{${kw}}}`);
        return { nodes, stop: piece.action };
      }
      const node = keywordNode(kw, rest, where, top) ?? { kind: 'action', pipe: parsePipeline(text, where) };
      if (node !== DEFINED) nodes.push(node);
    }
    if (!top) throw new Error(`template: ${name}: unexpected EOF`);
    return { nodes, stop: undefined };
  };

  /** The node for a keyword action; DEFINED for a define (stored, not emitted); undefined for a plain action. */
  const keywordNode = (kw: string | undefined, rest: string, where: string, top: boolean): Node | typeof DEFINED | undefined => {
    if (kw === undefined) return undefined;
    if (kw === 'if' || kw === 'with' || kw === 'range') return control(kw, rest, where);
    if (kw === 'template') {
      const m = /^("(?:[^"\\]|\\.)*")\s*(.*)$/s.exec(rest);
      if (!m) throw new Error(`template: ${where}: template needs a quoted name`);
      return { kind: 'template', name: JSON.parse(m[1] as string) as string, pipe: m[2] ? parsePipeline(m[2], where) : undefined };
    }
    if (kw !== 'define') throw new Error(`template: ${where}: {{${kw}}} is not supported by the chart renderer`);
    if (!top) throw new Error(`template: ${where}: define not at top level`);
    const body = list(false);
    if (body.stop?.text !== 'end') throw new Error(`template: ${where}: define without end`);
    defines.set(parseName(rest, where), body.nodes);
    return DEFINED;
  };

  const control = (kind: 'if' | 'with' | 'range', rest: string, where: string): Node => {
    const pipe = parsePipeline(rest, where);
    const body = list(false);
    let otherwise: Node[] = [];
    if (body.stop?.text.startsWith('else')) {
      const chained = /^else\s+(if|with)\s+(.*)$/s.exec(body.stop.text);
      if (chained) otherwise = [control(chained[1] as 'if' | 'with', chained[2] as string, where)];
      else {
        const tail = list(false);
        if (tail.stop?.text !== 'end') throw new Error(`template: ${where}: expected end after else`);
        otherwise = tail.nodes;
      }
    }
    return { kind, pipe, body: body.nodes, otherwise };
  };

  const root = list(true).nodes;
  return { root, defines };
}

function parseName(rest: string, where: string): string {
  const m = /^"((?:[^"\\]|\\.)*)"\s*$/.exec(rest);
  if (!m) throw new Error(`template: ${where}: define needs a quoted name`);
  return m[1] as string;
}
