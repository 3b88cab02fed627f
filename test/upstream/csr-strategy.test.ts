/**
 * CSR strategy cases ported as data from kubernetes pkg/registry/certificates/certificates/strategy_test.go
 * (TestStrategyCreate, TestStatusUpdate). Upstream's "no user in context" rows have no counterpart here:
 * every request reaching a strategy carries an authenticated (or anonymous) user.
 */
import type { KObject, UserInfo } from '../../src/api/meta.js';
import { csrStrategy } from '../../src/apiserver/registry/certificates/csr.js';
import { csrSubresource, ctx } from '../csr/helpers.js';

const csr = (spec: Record<string, unknown> = {}, status?: Record<string, unknown>): KObject => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name: 'x' },
  spec,
  ...(status ? { status } : {}),
});

describe('TestStrategyCreate', () => {
  const bob: UserInfo = { username: 'bob', uid: '123', groups: ['group1'], extra: { foo: ['bar'] } };
  const alice: UserInfo = { username: 'alice', uid: '234', groups: [] };
  it.each<[string, UserInfo, KObject, Record<string, unknown>]>([
    ['user in context, no user in obj', bob, csr(), { username: 'bob', uid: '123', groups: ['group1'], extra: { foo: ['bar'] } }],
    ['user in context, user in obj', alice, csr({ username: 'bob', uid: '123', groups: ['group1'] }), { username: 'alice', uid: '234' }],
    ['pre-approved status', alice, csr({}, { conditions: [{ type: 'Approved', status: 'True' }] }), { username: 'alice', uid: '234' }],
    ['expirationSeconds set', alice, csr({ expirationSeconds: 1234 }), { username: 'alice', uid: '234', expirationSeconds: 1234 }],
  ])('%s', (_name, user, obj, spec) => {
    csrStrategy.prepareForCreate?.(obj, ctx({ user }));
    // request and signerName have no omitempty in the Go type, so an absent one encodes as null / "".
    expect(obj.spec).toEqual({ request: null, signerName: '', ...spec });
    expect((obj.status as { conditions?: unknown[] } | undefined)?.conditions ?? []).toEqual([]);
  });
});

describe('TestStatusUpdate', () => {
  const now = new Date('2024-05-01T10:00:00Z');
  const NOW = '2024-05-01T10:00:00Z';
  const LATER = '2024-05-01T11:00:00Z';
  const c = (type: string, extra: Record<string, unknown> = {}) => ({ type, status: 'True', ...extra });
  it.each<[string, KObject, KObject, unknown[]]>([
    ['no-op', csr(), csr(), []],
    [
      'adding failed condition to existing approved/denied conditions',
      csr({}, { conditions: [c('Failed'), c('Denied'), c('Approved'), c('Denied'), c('Approved')] }),
      csr(
        {},
        {
          conditions: [
            c('Denied', { reason: 'because1' }),
            c('Approved', { reason: 'because2' }),
            c('Denied', { reason: 'because3', lastUpdateTime: LATER, lastTransitionTime: LATER }),
            c('Approved', { reason: 'because4', lastUpdateTime: LATER, lastTransitionTime: LATER }),
          ],
        },
      ),
      // the existing Approved/Denied conditions are preserved as they were
      [
        c('Failed', { lastUpdateTime: NOW, lastTransitionTime: NOW }),
        c('Denied', { reason: 'because1', lastUpdateTime: NOW, lastTransitionTime: LATER }),
        c('Approved', { reason: 'because2', lastUpdateTime: NOW, lastTransitionTime: LATER }),
        c('Denied', { reason: 'because3', lastUpdateTime: LATER, lastTransitionTime: LATER }),
        c('Approved', { reason: 'because4', lastUpdateTime: LATER, lastTransitionTime: LATER }),
      ],
    ],
    [
      // kept as submitted when there is nothing to copy back (validation then refuses it)
      'add approved condition',
      csr({}, { conditions: [c('Approved')] }),
      csr(),
      [c('Approved', { lastUpdateTime: NOW, lastTransitionTime: NOW })],
    ],
  ])('%s', (_name, next, old, conditions) => {
    csrSubresource('status').prepareForUpdate?.(next, old, ctx({ now }));
    expect((next.status as { conditions?: unknown[] } | undefined)?.conditions ?? []).toEqual(conditions);
  });
});
