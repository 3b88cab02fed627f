/**
 * `node --import` hook for the tests of up's controller watchdog: in the thread named `controller`, once
 * the file named by KUBE_IDENTITY_TEST_STALL_FILE exists, the event loop spins and never yields again, as
 * a controller stuck in a loop would. The thread stays alive; only its heartbeats stop.
 */
import { existsSync } from 'node:fs';
import { threadName } from 'node:worker_threads';

const file = process.env.KUBE_IDENTITY_TEST_STALL_FILE;
if (threadName === 'controller' && file) {
  setInterval(() => {
    if (!existsSync(file)) return;
    for (;;) {
      // Stuck: nothing after this runs, no timer, no message.
    }
  }, 100).unref();
}
