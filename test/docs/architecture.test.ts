/**
 * docs/architecture.md's "Layout" names the folders as they are: every folder of the API server and
 * the controller appears in it (as `FOLDER/`, relative to the program's folder), and every folder it
 * names there exists. Shared top-level folders of src/ appear as `src/NAME/`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const doc = readFileSync('docs/architecture.md', 'utf8');
const layout = doc.slice(doc.indexOf('## Layout'), doc.indexOf('\n## ', doc.indexOf('## Layout') + 1));

/** Every folder below `root`, relative to it, ending in '/'. */
function folders(root: string, rel = ''): string[] {
  return readdirSync(path.join(root, rel), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [`${rel}${e.name}/`, ...folders(root, `${rel}${e.name}/`)]);
}

/** The `NAME/` spans of a section, but the `src/...` ones that name the programs and shared folders. */
const named = (section: string): string[] =>
  [...section.matchAll(/`([a-z][a-z0-9-]*(?:\/[a-z0-9-]+)*\/)`/g)].map((m) => m[1] ?? '').filter((f) => !f.startsWith('src/'));

const section = (title: string): string => {
  const start = layout.indexOf(title);
  const end = layout.indexOf('\n### ', start + 1);
  return layout.slice(start, end < 0 ? undefined : end);
};

describe.each([
  ['### API server', 'src/apiserver'],
  ['### Controller', 'src/controller'],
])('%s', (title, root) => {
  const text = section(title);

  it('names every folder', () => {
    expect(text).not.toBe('');
    expect(folders(root).filter((f) => !text.includes(`\`${f}\``))).toEqual([]);
  });

  it('names only folders that exist', () => {
    expect(named(text).filter((f) => !statSync(path.join(root, f), { throwIfNoEntry: false })?.isDirectory())).toEqual([]);
  });
});

it('names every top-level folder of src/', () => {
  expect(folders('src').filter((f) => !f.slice(0, -1).includes('/') && !layout.includes(`\`src/${f}\``))).toEqual([]);
});
