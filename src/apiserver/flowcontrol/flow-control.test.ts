import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Registry } from 'prom-client';
import type { UserInfo } from '../../api/meta.js';
import { ApiError } from '../http/errors.js';
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

  it("a shed request is told its level's Retry-After: 1 s, then 2 s after a second that shed three or more", async () => {
    const h = gated();
    const work = fc.handle(alice, get, res, performance.now() + 60_000, h.execute);
    /** The Retry-After header and Status detail of one more alice request, shed while the seat is held. */
    const shed = (): string => {
      try {
        void fc.handle(alice, get, new ServerResponse(new IncomingMessage(new Socket())), performance.now() + 1_000, async () => undefined);
      } catch (err) {
        if (err instanceof ApiError && err.code === 429) return `${err.headers['Retry-After']} ${err.details?.retryAfterSeconds}`;
        throw err;
      }
      throw new Error('not shed');
    };
    // Early in a second of the clock, so the four below fall in the same one.
    const second = (): number => Math.floor(Date.now() / 1000);
    while (Date.now() % 1000 > 500) await new Promise((r) => setTimeout(r, 20));
    const first = second();
    expect([shed(), shed(), shed(), shed()]).toEqual(['1 1', '1 1', '1 1', '1 1']);
    expect(second()).toBe(first);
    while (second() === first) await new Promise((r) => setTimeout(r, 20));
    expect(shed()).toBe('2 2');
    h.finish();
    res.emit('close');
    await work;
  });
});
