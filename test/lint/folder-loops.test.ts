import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import layers from '../../hack/eslint-folder-loops.js';

/** Lints `file` of a throw-away tree of sources with only the folder-loop rule on. */
function lint(root: string, file: string): string[] {
  const linter = new Linter({ cwd: root });
  const config = [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { layers }, rules: { 'layers/no-folder-loop': 'error' as const } }];
  const abs = path.join(root, file);
  return linter.verify(fs.readFileSync(abs, 'utf8'), config, abs).map((m) => m.message);
}

function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-loops-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

describe('layers/no-folder-loop', () => {
  it('reports both imports of a loop through different files of two folders', () => {
    const root = tree({
      'src/a/one.ts': "import { two } from '../b/two.js';\nexport const one = two;\n",
      'src/a/three.ts': 'export const three = 3;\n',
      'src/b/two.ts': "import type { Three } from '../a/three.js';\nexport const two = 2;\nexport type T = Three;\n",
    });
    expect(lint(root, 'src/a/one.ts')).toEqual(['import makes a loop between folders: src/a → src/b → src/a']);
    expect(lint(root, 'src/b/two.ts')).toEqual(['import makes a loop between folders: src/b → src/a → src/b']);
  });

  it('finds loops through a third folder and between nested folders', () => {
    const root = tree({
      'src/x/p/a.ts': "export { b } from '../q/b.js';\n",
      'src/x/q/b.ts': "import { c } from '../../y/c.js';\nexport const b = c;\n",
      'src/y/c.ts': "export const c = await import('../x/p/a.js');\n",
    });
    expect(lint(root, 'src/y/c.ts')).toEqual(['import makes a loop between folders: src/y → src/x → src/y']);
    expect(lint(root, 'src/x/p/a.ts')).toEqual([]);
  });

  it('allows one-way imports, imports of a parent folder, and loops in tests', () => {
    const root = tree({
      'src/a/one.ts': "import { two } from '../b/two.js';\nimport { top } from '../top.js';\nexport const one = two + top;\n",
      'src/b/two.ts': 'export const two = 2;\n',
      'src/b/two.test.ts': "import { one } from '../a/one.js';\nexport const t = one;\n",
      'src/top.ts': "export const top = 1;\nexport { two } from './b/two.js';\n",
    });
    expect(lint(root, 'src/a/one.ts')).toEqual([]);
    expect(lint(root, 'src/b/two.test.ts')).toEqual([]);
  });

  it("counts a folder's loose files as a folder of their own (FOLDER/*)", () => {
    const root = tree({
      'src/c/register.ts': "import { impl } from './d/impl.js';\nexport const register = impl;\n",
      'src/c/errors.ts': 'export const errors = 1;\n',
      'src/c/d/impl.ts': "import { errors } from '../errors.js';\nexport const impl = errors;\n",
      'src/c/e/leaf.ts': "import { errors } from '../errors.js';\nexport const leaf = errors;\n",
    });
    expect(lint(root, 'src/c/register.ts')).toEqual(['import makes a loop between folders: src/c/* → src/c/d → src/c/*']);
    expect(lint(root, 'src/c/d/impl.ts')).toEqual(['import makes a loop between folders: src/c/d → src/c/* → src/c/d']);
    // One way from a subfolder to its parent's files is no loop.
    expect(lint(root, 'src/c/e/leaf.ts')).toEqual([]);
  });
});
