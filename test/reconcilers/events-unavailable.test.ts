/** Issuance does not wait for Events: with an Events API that never answers, every CSR is still approved and issued. */
import type { EventSink } from '../../src/controller/events/broadcaster.js';
import { createCsr, getCsr, startController, startHarness, waitFor, type Harness, type RunningController } from './harness.js';

const KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
const CSRS = 30;

describe('an Events API that never answers', () => {
  let h: Harness;
  let ctl: RunningController;
  let writes = 0;
  const hanging: EventSink = {
    create: () => {
      writes++;
      return new Promise(() => undefined);
    },
    update: () => new Promise(() => undefined),
  };

  beforeAll(async () => {
    h = await startHarness();
    ctl = await startController(h, { clusterSigningCertFile: h.caFiles.certFile, clusterSigningKeyFile: h.caFiles.keyFile }, { eventSink: hanging });
  });
  afterAll(async () => {
    await ctl?.stop();
    await h?.close();
  });

  it('never holds up approval or issuance', async () => {
    const names = Array.from({ length: CSRS }, (_, i) => `hang-${i}`);
    for (const name of names) {
      const res = await createCsr(h, 'bootstrap', { name, signerName: KUBELET, usages: ['digital signature', 'client auth'], subject: { commonName: `system:node:${name}`, organizations: ['system:nodes'] } });
      expect(res.status).toBe(201);
    }
    for (const name of names) await waitFor(`${name} issued`, async () => ((await getCsr(h, name)).status?.certificate ? true : undefined));
    // The controllers did try to record their decisions: the first write hangs, the rest wait or are dropped.
    expect(writes).toBe(1);
    const recorded = await ctl.registry.getSingleMetricAsString('kube_identity_events_recorded_total');
    expect(recorded).toMatch(new RegExp(`kube_identity_events_recorded_total\\{type="Normal",reason="AutoApproved"\\} ${CSRS}`));
    expect(recorded).toMatch(new RegExp(`kube_identity_events_recorded_total\\{type="Normal",reason="CertificateIssued"\\} ${CSRS}`));
  });
});
