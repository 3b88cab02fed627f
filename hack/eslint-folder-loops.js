/**
 * ESLint rule `layers/no-folder-loop`: no import loop between folders of src/. Folders are compared
 * where two paths part (src/apiserver/registry/core → src/apiserver/handlers/x is an edge
 * registry → handlers), so a loop through any files of two folders counts, not only a file cycle as
 * import plugins' no-cycle finds. A folder's loose files count as a folder of their own, named
 * FOLDER/* (src/controller/register.ts → src/controller/approver/x is an edge src/controller/* →
 * src/controller/approver), so a loop between a folder's files and its subfolders is caught too.
 * The folder graph is read once per run from the sources on disk with a regular expression (fast:
 * no module resolution); an import is reported when its target folder already reaches the
 * importing folder. Tests may import across layers and are not part of the graph.
 */
import fs from 'node:fs';
import path from 'node:path';

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

const isSource = (file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.endsWith('.d.ts');

/** The name of a folder's own (loose) files as a node of the graph: FOLDER/*. */
const LOOSE = '*';

/** A file's folders from the root down, ending with its folder's loose-files node. */
const nodes = (file) => [...path.dirname(file).split(path.sep), LOOSE];

/** The two sibling nodes an import from `fromFile` to `toFile` connects, or undefined inside one folder. */
export function folderEdge(fromFile, toFile) {
  const a = nodes(fromFile);
  const b = nodes(toFile);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (i >= a.length || i >= b.length) return undefined;
  return [a.slice(0, i + 1).join(path.sep), b.slice(0, i + 1).join(path.sep)];
}

function* sourceFiles(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* sourceFiles(p);
    else if (isSource(p)) yield p;
  }
}

function specifiers(text) {
  return [...text.matchAll(SPECIFIER)].map((m) => m[1] ?? m[2]);
}

/** folder → folders it imports, over every source file under `root`. */
export function folderGraph(root) {
  const graph = new Map();
  for (const file of sourceFiles(root)) {
    for (const spec of specifiers(fs.readFileSync(file, 'utf8'))) {
      const edge = folderEdge(file, path.resolve(path.dirname(file), spec));
      if (!edge) continue;
      if (!graph.has(edge[0])) graph.set(edge[0], new Set());
      graph.get(edge[0]).add(edge[1]);
    }
  }
  return graph;
}

/** A path from `from` to `to` in `graph` (breadth first), or undefined. */
function pathBetween(graph, from, to) {
  const prev = new Map([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const node = queue.shift();
    if (node === to) {
      const out = [];
      for (let n = to; n !== undefined; n = prev.get(n)) out.unshift(n);
      return out;
    }
    for (const next of graph.get(node) ?? []) {
      if (!prev.has(next)) {
        prev.set(next, node);
        queue.push(next);
      }
    }
  }
  return undefined;
}

const graphs = new Map();

const noFolderLoop = {
  meta: {
    type: 'problem',
    docs: { description: 'disallow import loops between folders of src/' },
    schema: [],
    messages: { loop: 'import makes a loop between folders: {{loop}}' },
  },
  create(context) {
    const root = path.join(context.cwd, 'src');
    const file = context.filename;
    if (!file.startsWith(root + path.sep) || !isSource(file)) return {};
    if (!graphs.has(root)) graphs.set(root, folderGraph(root));
    const graph = graphs.get(root);
    const check = (node) => {
      const spec = node.source?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const edge = folderEdge(file, path.resolve(path.dirname(file), spec));
      const back = edge && pathBetween(graph, edge[1], edge[0]);
      if (!back) return;
      const loop = [edge[0], ...back].map((f) => path.relative(context.cwd, f)).join(' → ');
      context.report({ node: node.source, messageId: 'loop', data: { loop } });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default { rules: { 'no-folder-loop': noFolderLoop } };
