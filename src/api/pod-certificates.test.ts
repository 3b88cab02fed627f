import {
  isKubernetesSignerName,
  maxMaxExpirationSeconds,
  pcrIsTerminal,
  pcrTerminalCondition,
  type PodCertificateRequestCondition,
} from './pod-certificates.js';

const cond = (type: string, status = 'True'): PodCertificateRequestCondition => ({
  type,
  status,
  reason: 'R',
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

describe('pod certificate helpers', () => {
  it.each([
    ['kubernetes.io/kube-apiserver-client-pod', true],
    ['sub.kubernetes.io/x', true],
    ['notkubernetes.io/x', false],
    ['kube-identity.io/workload', false],
    ['example.com/kubernetes.io', false],
  ])('isKubernetesSignerName(%j) is %j', (name, want) => {
    expect(isKubernetesSignerName(name)).toBe(want);
  });

  it('caps kubernetes.io signers at 24 h and others at 91 days', () => {
    expect(maxMaxExpirationSeconds('kubernetes.io/kube-apiserver-client-pod')).toBe(86_400);
    expect(maxMaxExpirationSeconds('kube-identity.io/workload')).toBe(7_862_400);
  });

  it('finds only a True terminal condition', () => {
    expect(pcrIsTerminal({})).toBe(false);
    expect(pcrIsTerminal({ status: { conditions: [cond('Issued', 'False'), cond('Other')] } })).toBe(false);
    expect(pcrTerminalCondition({ status: { conditions: [cond('Other'), cond('Denied')] } })?.type).toBe('Denied');
  });
});
