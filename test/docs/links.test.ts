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
