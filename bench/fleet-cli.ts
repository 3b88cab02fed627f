/**
 * The command line of `bench fleet` (bench/fleet.ts): which N to run, over which protocols, and where
 * the JSON goes. Each N's table and JSON line are printed as soon as it is done; with `--out DIR` the
 * JSON goes to DIR/fleet-N.json too (bench/plot.ts --fleet DIR draws docs/perf-fleet.svg from them).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FleetParams } from './fleet.js';
import { parseBenchArgs } from './lib/cli.js';

const FLEET_USAGE = `usage: npm run bench -- fleet [flags]   (or node dist/bench/run.js fleet [flags])
N simulated kubelets against kube-identity up: join storm, steady state, rotation wave, server restart.
  --nodes N[,N2...]        nodes per run, each N in turn (default 100); the largest N meeting every SLO is named
  --protocols h2,http1     run each N over each protocol back to back (default h2); --http1 alone forces HTTP/1.1
  --join-seconds S         the window the N nodes start joining in (default 10)
  --steady-seconds S       length of the steady state (default 120)
  --timeout-seconds S      how long a scenario may take before it is reported as not reached (default 600)
  --workers W              simulator processes (default one per 250 nodes, at most 8)
  --out DIR                write each N's JSON to DIR/fleet-N.json
  --stop-after SCENARIO    end the run after join, steady, rotation or restart (A/B runs of one scenario)
  --no-rotation            leave the rotation wave out: the restart follows the steady state (A/B runs of the restart)
  --up-cpu-prof DIR        run up under node --cpu-prof (profile in DIR); stops after the steady state unless --stop-after says
                           (restart: both up processes profiled, one file each)
  --verbose                progress on stderr`;

/**
 * Runs each N of `--nodes A,B,C` in turn (each over h2 then HTTP/1.1 with `--protocols h2,http1`;
 * `--http1` alone forces HTTP/1.1): table, then JSON line, and with `--out DIR` the JSON in
 * DIR/fleet-N.json as soon as that N is done; last, the largest N that met every SLO. `--help`
 * prints the usage and starts nothing.
 */
export async function runFleetCli(argv: string[]): Promise<void> {
  const o = fleetOptions(argv);
  // Imported once the flags are good: `--help` and a bad flag answer without loading the server's code.
  const { fleetResultFile, formatFleetTable, runFleetBench } = await import('./fleet.js');
  if (o.out) mkdirSync(o.out, { recursive: true });
  const met: number[] = [];
  for (const nodes of o.counts) {
    for (const protocol of o.protocols) {
      const r = await runFleetBench({ ...o.params, nodes, http1: protocol === 'http1' }, o.verbose ? (l) => console.error(l) : undefined);
      console.log(formatFleetTable(r));
      console.log(JSON.stringify(r));
      if (o.out) writeFileSync(fleetResultFile(o.out, r), `${JSON.stringify(r)}\n`);
      if (r.sloMet && protocol === o.protocols[0]) met.push(nodes);
    }
  }
  const which = o.protocols.length > 1 ? ` (${o.protocols[0]})` : '';
  if (o.counts.length > 1) console.log(`largest N meeting every SLO${which}: ${met.length ? Math.max(...met) : 'none'}`);
}

const STOP_AFTER = ['join', 'steady', 'rotation', 'restart'] as const;

function fleetOptions(argv: string[]) {
  const text = { type: 'string' } as const;
  const args = parseBenchArgs(argv, {
    command: 'bench fleet',
    usage: FLEET_USAGE,
    options: { nodes: text, protocols: text, http1: { type: 'boolean' }, 'join-seconds': text, 'steady-seconds': text, 'timeout-seconds': text, workers: text, out: text, 'stop-after': text, 'up-cpu-prof': text, 'no-rotation': { type: 'boolean' }, verbose: { type: 'boolean' } },
  });
  const nodes = args.string('nodes') ?? '100';
  const counts = nodes.split(',').map(Number);
  if (counts.some((n) => !Number.isInteger(n) || n < 1)) args.fail(`--nodes takes positive integers, got ${nodes}`);
  const protocols = (args.string('protocols') ?? (args.flag('http1') ? 'http1' : 'h2')).split(',');
  if (protocols.some((x) => x !== 'h2' && x !== 'http1')) args.fail(`--protocols takes h2 and http1, got ${args.string('protocols')}`);
  const seconds = (name: string): number | undefined => {
    const s = args.number(name, { min: 1 });
    return s === undefined ? undefined : s * 1000;
  };
  const params: Partial<FleetParams> = {};
  const joinSpreadMs = seconds('join-seconds');
  if (joinSpreadMs !== undefined) params.joinSpreadMs = joinSpreadMs;
  const steadyMs = seconds('steady-seconds');
  if (steadyMs !== undefined) params.steadyMs = steadyMs;
  const timeoutMs = seconds('timeout-seconds');
  if (timeoutMs !== undefined) params.scenarioTimeoutMs = timeoutMs;
  const workers = args.number('workers', { min: 1, integer: true });
  if (workers !== undefined) params.workers = workers;
  const stopAfter = args.string('stop-after');
  if (stopAfter !== undefined) {
    const scenario = STOP_AFTER.find((x) => x === stopAfter);
    params.stopAfter = scenario ?? args.fail(`--stop-after takes join, steady, rotation or restart, got ${stopAfter}`);
  }
  if (args.flag('no-rotation')) {
    if (params.stopAfter === 'rotation') args.fail('--stop-after rotation and --no-rotation contradict each other');
    params.rotation = false;
  }
  const cpuProf = args.string('up-cpu-prof');
  if (cpuProf !== undefined) params.upCpuProfDir = path.resolve(cpuProf);
  return { counts, protocols, params, out: args.string('out'), verbose: args.flag('verbose') };
}

