/** `kube-identity version`: what `--version` prints, in full, or as JSON for scripts. */
import type { Command } from 'commander';
import { buildVersion } from '../lib/version.js';

export function registerVersionCommand(program: Command): void {
  program
    .command('version')
    .description('print the version, git commit, build date and Node version')
    .option('-o, --output <format>', 'text or json', 'text')
    .action((flags: { output: string }) => {
      const v = buildVersion();
      if (flags.output === 'json') {
        process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
        return;
      }
      if (flags.output !== 'text') throw new Error(`--output must be text or json, not ${JSON.stringify(flags.output)}`);
      process.stdout.write(
        [`kube-identity ${v.version}`, `  commit  ${v.commit}`, `  built   ${v.buildDate || 'unknown'}`, `  node    ${v.nodeVersion}`, ''].join('\n'),
      );
    });
}
