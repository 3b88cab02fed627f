/**
 * Docs link only to what is in the repository: every relative link in a tracked *.md file resolves
 * to a file or folder inside the checkout, and no doc points at a path outside it (a `../shared`
 * beside the checkout, an absolute path on one machine), which a fresh clone does not have.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = process.cwd();
const DOCS = execFileSync('git', ['ls-files', '*.md'], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '');

/** The text outside fenced code blocks and inline code spans, where markdown links live. */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
const anchorCache = new Map<string, Set<string>>();
function headingAnchors(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors) return anchors;
  anchors = new Set();
  const seen = new Map<string, number>();
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading = ''] of text.matchAll(/^#{1,6} (.*)$/gm)) {
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

const inRepo = (p: string): boolean => !path.relative(ROOT, p).startsWith('..') && !path.isAbsolute(path.relative(ROOT, p));

it('finds the docs', () => {
  expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/serving-approver.md', 'docs/runbook.md']));
});

describe.each(DOCS)('%s', (file) => {
  const text = readFileSync(file, 'utf8');

  it('links only to files in the repository', () => {
    const broken: string[] = [];
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1] ?? '';
      if (/^(https?:|mailto:|#)/.test(target)) continue;
      const resolved = path.resolve(path.dirname(file), decodeURI(target.split('#')[0] ?? ''));
      if (!inRepo(resolved) || !existsSync(resolved)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it('links only to headings that exist, in this file or the one it names', () => {
    const broken: string[] = [];
    for (const m of prose(text).matchAll(/\]\(([^)\s]*)#([^)\s]+)\)/g)) {
      const [, target = '', anchor = ''] = m;
      if (/^(https?:|mailto:)/.test(target)) continue;
      const file2 = target === '' ? file : path.relative(ROOT, path.resolve(path.dirname(file), decodeURI(target)));
      if (!file2.endsWith('.md') || !existsSync(file2)) continue;
      if (!headingAnchors(file2).has(decodeURIComponent(anchor))) broken.push(`${target}#${anchor}`);
    }
    expect(broken).toEqual([]);
  });

  it('names no path outside the checkout', () => {
    const outside = [...text.matchAll(/(?<![\w.])(?:\.\.\/)+[\w.-]+|\/work\/[\w./-]*/g)]
      .map((m) => m[0])
      .filter((p) => p.startsWith('/work/') || !inRepo(path.resolve(path.dirname(file), p)));
    expect(outside).toEqual([]);
  });
});

// Benchmark results shipped in docs/bench name builds by commit, never by where they sat on one machine.
describe('docs/bench results', () => {
  const results = execFileSync('git', ['ls-files', 'docs/bench/*.json', 'docs/bench/**/*.json'], { encoding: 'utf8' })
    .split('\n')
    .filter((f) => f !== '');

  it.each(results)('%s holds no absolute path of the machine it ran on', (file) => {
    const machinePaths = [...readFileSync(file, 'utf8').matchAll(/"(\/(?:work|tmp|root|home)\/[^"]*)"/g)].map((m) => m[1]);
    expect(machinePaths).toEqual([]);
  });
});
