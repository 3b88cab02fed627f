/** docs/configuration.md's table of controller options must say what `kube-identity controller --help` says. */
import { readFileSync } from 'node:fs';
import { describeConfig } from '../../src/config/schema.js';

it('lists every controller option with its environment variable and default', () => {
  const readme = readFileSync('docs/configuration.md', 'utf8');
  const rows = readme.split('\n').filter((l) => l.startsWith('| `--'));
  const options = describeConfig();
  expect(rows).toHaveLength(options.length);
  for (const o of options) {
    const row = rows.find((r) => r.startsWith(`| \`${o.flag}\` |`));
    expect(row).toBeDefined();
    expect(row).toContain(`| \`${o.env}\` |`);
    expect(row).toContain(`| \`${o.default === '' ? '""' : o.default}\` |`);
  }
});
