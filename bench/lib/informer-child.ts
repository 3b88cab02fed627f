/**
 * The controller's CSR cache alone, in its own process: the project's Informer over
 * certificatesigningrequests with the production ListWatch, nothing else. `bench/cache.ts` compares
 * its memory with the whole controller's. Run as a child with --expose-gc:
 * `informer-child KUBECONFIG`; prints {"objects":N,"heapUsed":B} once synced and collected.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { Informer } from '../../src/controller/informer/informer.js';
import { clientListWatch } from '../../src/controller/informer/list-watch.js';
import { realClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/log/logger.js';

const kubeconfigPath = process.argv[2];
if (kubeconfigPath) {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const client = new KubeClient({ kubeConfig, clock: realClock });
  const informer = new Informer({
    name: 'certificatesigningrequests',
    listWatch: clientListWatch(client, { group: 'certificates.k8s.io', version: 'v1', plural: 'certificatesigningrequests' }),
    clock: realClock,
    logger: createLogger({ level: 'warn', destination: process.stderr }),
  });
  const stop = new AbortController();
  // The informer's timers do not hold the process open (a failed LIST would otherwise end it).
  const keepAlive = setInterval(() => {}, 60_000);
  process.on('SIGTERM', () => {
    clearInterval(keepAlive);
    stop.abort();
  });
  const running = informer.run(stop.signal);
  await informer.waitForSync(stop.signal);
  (globalThis as { gc?: () => void }).gc?.();
  console.log(JSON.stringify({ objects: informer.store.size(), heapUsed: process.memoryUsage().heapUsed }));
  await running;
}
