/** KubeClient against the embedded API server: typed and raw requests on one transport, Status errors. */
import { CoordinationV1Api } from '@kubernetes/client-node';
import { HttpStatusError, KubeClient } from '../../src/controller/client/kube-client.js';
import { realClock } from '../../src/lib/clock.js';
import { startTestServer } from '../helpers/server.js';

describe('KubeClient on the embedded API server', () => {
  it('serves typed and raw requests and turns a 404 into HttpStatusError with the Status', async () => {
    const server = await startTestServer();
    const client = new KubeClient({ kubeConfig: server.kubeConfig, clock: realClock });
    try {
      const leases = await client.api(CoordinationV1Api).listNamespacedLease({ namespace: 'default' });
      expect(Array.isArray(leases.items)).toBe(true);
      const ns = await client.requestJSON<{ metadata: { name: string } }>('GET', '/api/v1/namespaces/default');
      expect(ns.metadata.name).toBe('default');
      const err = await client.requestJSON('GET', '/api/v1/namespaces/no-such-namespace').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HttpStatusError);
      expect((err as HttpStatusError).code).toBe(404);
      expect((err as HttpStatusError).body).toMatchObject({ kind: 'Status', reason: 'NotFound' });
    } finally {
      client.close();
      await server.close();
    }
  });
});
