/**
 * The code of `up`'s controller thread (controller-thread.ts starts it): the controller as
 * `kube-identity controller` runs it, with its own logger on the shared log file, started and
 * stopped by messages from the main thread (signals reach only the main thread).
 */
import 'reflect-metadata';
import { KubeConfig } from '@kubernetes/client-node';
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { LeaderElectionLost } from '../controller/runtime/election-lost.js';
import { createLogger, type Logger } from '../log/logger.js';
import { runControllerProcess } from './controller.js';
import { HEARTBEAT_INTERVAL_MS, toThreadError, type ControllerThreadData, type ThreadMessage, type ToThreadMessage } from './controller-thread.js';
// runControllerProcess imports these when it starts; loaded here, they load while the main thread
// starts the API server, not after it.
import '../controller/run-controller.js';
import '../controller/register.js';

const port = parentPort;
if (!port) throw new Error('controller-thread-entry runs only as a worker thread');
const data = workerData as ControllerThreadData;
const post = (m: ThreadMessage): void => port.postMessage(m);
// Posted from this event loop, so it stops when the loop does: the main thread's watchdog
// (controller-thread.ts) notices the silence. Unref'd: it keeps nothing alive once the run is over.
const beat = (): void => post({ type: 'heartbeat' });
beat();
setInterval(beat, HEARTBEAT_INTERVAL_MS).unref();

const stop = new AbortController();
let ready: (kubeConfig: string | undefined) => void = () => undefined;
const started = new Promise<string | undefined>((resolve) => (ready = resolve));
const onMessage = (m: ToThreadMessage): void => {
  if (m.type === 'run') return ready(m.kubeConfig);
  stop.abort(new Error('stopped by the main thread'));
  ready(undefined);
};
port.on('message', onMessage);

/** Runs the controller until stopped; a lost election starts a fresh run. */
async function runUntilStopped(logger: Logger, kubeConfigText: string): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeConfigText);
  try {
    for (;;) {
      try {
        await runControllerProcess(data.config, logger, stop.signal, { kubeConfig, onListening: (url) => post({ type: 'listening', url }) });
        return;
      } catch (err) {
        // A Deployment's controller exits on a lost election and is restarted as a fresh candidate;
        // here nothing would restart it, and the cluster would be left without one: it campaigns again.
        if (!(err instanceof LeaderElectionLost) || stop.signal.aborted) throw err;
        logger.error({ err }, 'controller lost its leader election: campaigning again');
      }
    }
  } catch (err) {
    logger.error({ err }, 'controller failed');
    throw err;
  }
}

const kubeConfigText = await started;
if (kubeConfigText === undefined) post({ type: 'stopped' });
else {
  // Opened once the server is up (a start that fails removes the files it made). Its own descriptor
  // on the file, for appending: each line is one write, whole, whichever thread writes it, and writing
  // never waits for the main thread.
  const logger = createLogger({ level: data.config.logLevel, destination: pino.destination({ dest: data.logFile, mode: 0o600, sync: true }) }).child({ logger: 'controller' });
  try {
    await runUntilStopped(logger, kubeConfigText);
    post({ type: 'stopped' });
  } catch (err) {
    post({ type: 'failed', error: toThreadError(err) });
  }
}
port.off('message', onMessage);
