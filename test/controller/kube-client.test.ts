/** KubeClient against the embedded API server: its requests share keep-alive TLS connections. */
import type { Agent } from 'node:https';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { realClock } from '../../src/lib/clock.js';
import { startTestServer } from '../helpers/server.js';

describe('KubeClient connections', () => {
  it('reuses one connection for sequential typed and raw requests (client-certificate kubeconfig)', async () => {
    const server = await startTestServer();
    const client = new KubeClient({ kubeConfig: server.kubeConfig, clock: realClock });
    try {
      const leases = client.api(CoordinationV1Api);
      const sockets = new Set<unknown>();
      for (let i = 0; i < 4; i++) {
        await leases.listNamespacedLease({ namespace: 'default' });
        await client.requestJSON('GET', '/api/v1/namespaces/default');
        const agent = (client as unknown as { agents: { current?: { agent: Agent } } }).agents.current?.agent;
        for (const list of Object.values(agent?.freeSockets ?? {})) for (const s of list ?? []) sockets.add(s);
      }
      expect(sockets.size).toBe(1);
    } finally {
      client.close();
      await server.close();
    }
  });
});
