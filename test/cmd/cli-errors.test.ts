/**
 * What a mistyped command line shows: the error as the last thing on the screen (one hint line after
 * it, not the whole help above it), and each bad value named once, by the flag the user typed.
 */
import { runCli } from '../helpers/cli.js';

it('ends an unknown flag, command or missing value with the error and a one-line hint to --help', async () => {
  const cases: [string[], string][] = [
    [['up', '--bogus'], "error: unknown option '--bogus'\n(run 'kube-identity up --help' for usage)\n"],
    [['controller', '--leader-elec'], "error: unknown option '--leader-elec'\n(Did you mean --leader-elect?)\n(run 'kube-identity controller --help' for usage)\n"],
    [['bogus'], "error: unknown command 'bogus'\n(run 'kube-identity --help' for usage)\n"],
    [['apiserver', '--port'], "error: option '--port <int>' argument missing\n(run 'kube-identity apiserver --help' for usage)\n"],
  ];
  for (const [args, stderr] of cases) {
    const r = await runCli(args);
    expect({ args, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ args, code: 1, stdout: '', stderr });
  }
}, 120_000);

it('names a bad value once, by the flag or variable that gave it', async () => {
  const r = await runCli(['apiserver', '--port', 'abc', '--storage', 'mongo'], { env: { KUBE_IDENTITY_LOG_LEVEL: 'loud' } });
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(
    [
      'kube-identity: invalid configuration:',
      '  flag --port: must be an integer, got "abc"',
      '  flag --storage: must be one of sqlite, memory, etcd, got "mongo"',
      '  env KUBE_IDENTITY_LOG_LEVEL: must be one of debug, info, warn, error, got "loud"',
      '',
    ].join('\n'),
  );
}, 60_000);
