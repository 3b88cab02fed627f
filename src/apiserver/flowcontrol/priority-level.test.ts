import type { UserInfo } from '../../api/meta.js';
import { parseRequestInfo } from '../http/request-info.js';
import { classify } from './classify.js';
import { queueWaitLimitMs } from './flow-control.js';
import { PriorityLevel, type Ticket } from './priority-level.js';

const queuing = { queues: 8, queueLengthLimit: 3, handSize: 2 };

/** Records the order in which queued requests get their seat. */
function track(level: PriorityLevel, flow: string, order: string[], waitMs = 60_000): Ticket {
  const t = level.enqueue(flow, waitMs);
  if (typeof t === 'string') throw new Error(`${flow} rejected: ${t}`);
  void t.admitted.then((r) => order.push(r ? `${flow}:${r}` : flow));
  return t;
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('a priority level', () => {
  it('takes seats while free, then queues, and serves flows in turn rather than in arrival order', async () => {
    const level = new PriorityLevel(1, queuing);
    expect(level.tryAcquire()).toBe(true);
    expect(level.tryAcquire()).toBe(false);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) track(level, 'storm', order);
    track(level, 'node', order);
    for (let i = 0; i < 4; i++) {
      level.release();
      await tick();
    }
    // The node's one request waited behind one of the storm's three, not all of them.
    expect(order.indexOf('node')).toBeLessThanOrEqual(1);
    expect(order.filter((f) => f === 'storm')).toHaveLength(3);
    expect([level.executing, level.waiting]).toEqual([1, 0]);
  });

  it('rejects a flow whose queues are full, one that waited too long, and none that went away twice', async () => {
    const level = new PriorityLevel(1, { queues: 1, queueLengthLimit: 2, handSize: 1 });
    level.tryAcquire();
    const order: string[] = [];
    const gone = track(level, 'a', order, 30);
    track(level, 'a', order, 30);
    expect(level.enqueue('b', 30)).toBe('queue-full');
    gone.cancel();
    gone.cancel();
    await new Promise((r) => setTimeout(r, 60));
    expect(order).toEqual(['a:cancelled', 'a:time-out']);
    expect([level.executing, level.waiting]).toEqual([1, 0]);
    expect(new PriorityLevel(1, { queues: 0, queueLengthLimit: 0, handSize: 0 }).enqueue('a', 30)).toBe('concurrency-limit');
  });
});

describe('the queue wait limit', () => {
  it('is a quarter of the request\'s deadline, at most a minute, as upstream\'s', () => {
    expect(queueWaitLimitMs(60_000)).toBe(15_000);
    expect(queueWaitLimitMs(2_000)).toBe(500);
    expect(queueWaitLimitMs(100)).toBe(25);
    expect(queueWaitLimitMs(240_000)).toBe(60_000);
    expect(queueWaitLimitMs(3_600_000)).toBe(60_000);
  });
});

describe('classification', () => {
  const user = (username: string, ...groups: string[]): UserInfo => ({ username, groups: [...groups, 'system:authenticated'] });
  const node = user('system:node:n1', 'system:nodes');
  const at = (u: UserInfo, method: string, path: string): string => {
    const c = classify(u, parseRequestInfo(method, path, new URLSearchParams(path.split('?')[1] ?? '')));
    return `${c.priorityLevel}/${c.flowSchema}`;
  };

  it('puts heartbeats above CSRs and lists, and leader election apart', () => {
    expect(at(node, 'PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1')).toBe('node-high/system-node-high');
    expect(at(node, 'PATCH', '/api/v1/nodes/n1/status')).toBe('node-high/system-node-high');
    expect(at(node, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).toBe('workload/system-nodes');
    expect(at(node, 'GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1')).toBe('workload/system-nodes');
    const bootstrap = user('system:bootstrap:abcdef', 'system:bootstrappers');
    expect(at(bootstrap, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).toBe('workload/global-default');
    // A bootstrap token is no node: its Lease writes are not heartbeats.
    expect(at(bootstrap, 'PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1')).toBe('workload/global-default');
    const controller = user('system:serviceaccount:kube-identity:kube-identity', 'system:serviceaccounts');
    expect(at(controller, 'PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-identity/leases/kube-identity')).toBe('leader-election/system-leader-election');
    expect(at(controller, 'DELETE', '/apis/coordination.k8s.io/v1/namespaces/kube-identity/leases/kube-identity')).toBe('workload/global-default');
    expect(at(controller, 'PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/x/approval')).toBe('workload/global-default');
    expect(at(user('admin', 'system:masters'), 'GET', '/api/v1/nodes')).toBe('exempt/exempt');
    // The controller managers' work, and kube-system's service accounts', ahead of the storm they serve (upstream's workload-high).
    const own = user('system:kube-identity-controller', 'system:authenticated');
    expect(at(own, 'PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/x/approval')).toBe('workload-high/kube-identity-controller');
    expect(at(own, 'GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests')).toBe('workload-high/kube-identity-controller');
    expect(at(own, 'PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-identity-controller')).toBe('leader-election/system-leader-election');
    expect(at(user('system:kube-controller-manager'), 'PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/x/status')).toBe('workload-high/kube-controller-manager');
    expect(at(user('system:serviceaccount:kube-system:certificate-controller', 'system:serviceaccounts'), 'PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/x/approval')).toBe(
      'workload-high/kube-system-service-accounts',
    );
    expect(at({ username: 'system:anonymous', groups: ['system:unauthenticated'] }, 'GET', '/version')).toBe('workload/catch-all');
  });
});
