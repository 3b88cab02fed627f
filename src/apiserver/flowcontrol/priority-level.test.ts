import type { UserInfo } from '../../api/meta.js';
import { parseRequestInfo } from '../http/request-info.js';
import { classify } from './classify.js';
import { queueWaitLimitMs } from './flow-control.js';
import { LendingPool, PriorityLevel, type Ticket } from './priority-level.js';

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

describe('seats lent between levels', () => {
  it('runs a full level\'s requests on another\'s idle lendable seats, never below the lender\'s own share', () => {
    const pool = new LendingPool();
    const workload = new PriorityLevel(4, queuing, 3, pool);
    const nodeHigh = new PriorityLevel(2, queuing, 0, pool);
    expect([nodeHigh.tryAcquire(), nodeHigh.tryAcquire(), nodeHigh.tryAcquire()]).toEqual([true, true, false]);
    // Its own two seats taken: the next three Lease renewals run on the workload level's lendable seats, not a fourth.
    expect([nodeHigh.tryBorrow(), nodeHigh.tryBorrow(), nodeHigh.tryBorrow(), nodeHigh.tryBorrow()]).toEqual([workload, workload, workload, undefined]);
    // The workload level keeps its nominal less its lendable seats for itself: one.
    expect([workload.tryAcquire(), workload.tryAcquire()]).toEqual([true, false]);
    // node-high has no lendable seats, so the workload level finds none to borrow.
    expect(workload.tryBorrow()).toBeUndefined();
    nodeHigh.release(workload);
    expect([workload.lent, workload.tryAcquire()]).toEqual([2, true]);
  });

  it('lends nothing while its own requests wait, and gives a returned seat to its own queue first', async () => {
    const pool = new LendingPool();
    const workload = new PriorityLevel(2, queuing, 1, pool);
    const nodeHigh = new PriorityLevel(1, queuing, 0, pool);
    expect([nodeHigh.tryAcquire(), nodeHigh.tryBorrow(), workload.tryAcquire()]).toEqual([true, workload, true]);
    const order: string[] = [];
    track(workload, 'storm', order);
    track(nodeHigh, 'node', order);
    // The lent seat comes back and goes to the workload level's own waiting request, not to node-high's.
    nodeHigh.release(workload);
    await tick();
    expect(order).toEqual(['storm']);
    expect([workload.executing, workload.lent, nodeHigh.waiting]).toEqual([2, 0, 1]);
    // Once the workload level has a seat idle and nobody of its own waits, node-high's queue borrows it.
    workload.release();
    await tick();
    expect(order).toEqual(['storm', 'node']);
    expect([workload.executing, workload.lent, nodeHigh.executing, nodeHigh.waiting]).toEqual([1, 1, 1, 0]);
  });

  it('admits a queued request on a seat a lender frees, and tells it whose seat it holds', async () => {
    const pool = new LendingPool();
    const workload = new PriorityLevel(2, queuing, 1, pool);
    const nodeHigh = new PriorityLevel(1, queuing, 0, pool);
    expect([workload.tryAcquire(), workload.tryAcquire(), nodeHigh.tryAcquire(), nodeHigh.tryBorrow()]).toEqual([true, true, true, undefined]);
    const order: string[] = [];
    const waiting = track(nodeHigh, 'node', order);
    workload.release();
    await tick();
    expect(order).toEqual(['node']);
    expect(waiting.lender).toBe(workload);
    expect([workload.executing, workload.lent]).toEqual([1, 1]);
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
