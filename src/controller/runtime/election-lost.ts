/**
 * How a manager's run ends when it stops leading (another candidate holds the lease, or renewing it
 * failed past the renew deadline). Its own module so `up` can tell it apart without loading the runtime.
 */
export class LeaderElectionLost extends Error {
  constructor() {
    super('leader election lost');
    this.name = 'LeaderElectionLost';
  }
}
