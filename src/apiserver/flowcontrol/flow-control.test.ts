import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Registry } from 'prom-client';
import type { UserInfo } from '../../api/meta.js';
import { parseRequestInfo } from '../http/request-info.js';
import { FlowControl } from './flow-control.js';

const sample = (text: string, name: string, labels: string): number => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
const EXEMPT = 'priority_level="exempt",flow_schema="exempt"';
const WORKLOAD = 'priority_level="workload",flow_schema="global-default"';

const admin: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
const alice: UserInfo = { username: 'alice', groups: ['system:authenticated'] };
const get = parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps/a', new URLSearchParams());

/** A handler that runs until `finish` is called. */
function gated(): { execute: () => Promise<void>; finish: () => void } {
  let finish = (): void => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { execute: () => done, finish };
}

describe('flow control holding a request', () => {
  let registry: Registry;
  let fc: FlowControl;
  let res: ServerResponse;
  const executing = async (labels: string): Promise<number> => sample(await registry.metrics(), 'apiserver_flowcontrol_current_executing_requests', labels);

  beforeEach(() => {
    registry = new Registry();
    // One workload seat and no queue: a second alice request is shed while the first holds it.
    fc = new FlowControl({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 0, maxEventLoopDelayMs: 0, registry, queuing: { workload: { queues: 0, queueLengthLimit: 0, handSize: 0 } } });
    res = new ServerResponse(new IncomingMessage(new Socket()));
  });
  afterEach(() => fc.close());

  it('an exempt request executes until its handler settles, with no listener on the response', async () => {
    const h = gated();
    const work = fc.handle(admin, get, res, performance.now() + 1_000, h.execute);
    expect(res.listenerCount('close')).toBe(0);
    expect(await executing(EXEMPT)).toBe(1);
    h.finish();
    await work;
    expect(await executing(EXEMPT)).toBe(0);
  });

  it('a seated request holds its seat until its handler settled and its response closed', async () => {
    const h = gated();
    const work = fc.handle(alice, get, res, performance.now() + 1_000, h.execute);
    expect(res.listenerCount('close')).toBe(1);
    h.finish();
    await work;
    // Answered, not yet flushed: a slow reader keeps the seat, so the next request is shed.
    expect(await executing(WORKLOAD)).toBe(1);
    const other = new ServerResponse(new IncomingMessage(new Socket()));
    expect(() => fc.handle(alice, get, other, performance.now() + 1_000, async () => undefined)).toThrow('Too many requests');
    res.emit('close');
    expect(await executing(WORKLOAD)).toBe(0);
    await fc.handle(alice, get, other, performance.now() + 1_000, async () => undefined);
  });
});
