/**
 * Leader election, client-go's name: leader_election_master_status{name} is 1 while this process
 * holds the lease `name`, 0 otherwise.
 */
import { Gauge, type Registry } from 'prom-client';
import { once } from './registry.js';

export function leaderGauge(registry: Registry): Gauge<'name'> {
  return once(
    registry,
    'leader',
    () =>
      new Gauge({
        name: 'leader_election_master_status',
        help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
        labelNames: ['name'],
        registers: [registry],
      }),
  );
}
