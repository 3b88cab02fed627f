/**
 * The fault soak's clients and what they record (bench/soak.ts): writers creating ConfigMaps, writers
 * swapping one hot ConfigMap by resourceVersion (each read and swap an operation of the register
 * history), a watcher per replica that follows the namespace across ends and 410s, and a prober per
 * replica whose list resourceVersions must never go back. Every outcome is classified as upstream
 * means it: 2xx acknowledged, 409 a definite refusal, 503 not applied, 504 or no answer unknown.
 */
import type { TimedOp } from './linearizability.js';
import type { HttpClient } from './http-client.js';

export const NS_PATH = '/api/v1/namespaces/default/configmaps';
/** More than the server's etcd deadline (10 s): a request that runs out is unknown, never failed. */
const CLIENT_TIMEOUT_MS = 20_000;

export type Outcome = 'ok' | 'refused' | 'unknown' | 'unexpected';

/** 2xx ok; 409 and 503 refused (never applied); 504 or no answer unknown; anything else a violation. */
export function outcomeOf(status: number | undefined): Outcome {
  if (status === undefined || status === 504) return 'unknown';
  if (status >= 200 && status < 300) return 'ok';
  if (status === 409 || status === 503) return 'refused';
  return 'unexpected';
}

export interface Write {
  name: string;
  /** The hot object's value this write set (swaps only). */
  value?: string;
  outcome: Outcome;
  status?: number;
  rv?: number;
}

export interface Records {
  writes: Write[];
  hot: TimedOp[];
  statuses: Map<string, number>;
  violations: string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The parts of a ConfigMap, list or Status the soak reads. */
interface Reply {
  metadata?: { name?: string; resourceVersion?: string };
  data?: { v?: string };
}

async function send(client: HttpClient, method: string, path: string, body?: unknown): Promise<{ status?: number; json?: Reply }> {
  try {
    const res = await client.request(method, path, body, CLIENT_TIMEOUT_MS);
    return { status: res.status, json: res.body ? (JSON.parse(res.body) as Reply) : undefined };
  } catch {
    return {};
  }
}

function count(rec: Records, what: string, status: number | undefined): void {
  const key = `${what} ${status ?? 'no answer'}`;
  rec.statuses.set(key, (rec.statuses.get(key) ?? 0) + 1);
}

/** Creates `c-<id>-<i>` until `done()`, one at a time; each acknowledgement's resourceVersion above the last. */
export async function createWriter(client: HttpClient, id: string, rec: Records, done: () => boolean): Promise<void> {
  let last = 0;
  for (let i = 0; !done(); i++) {
    const name = `c-${id}-${i}`;
    const res = await send(client, 'POST', NS_PATH, { metadata: { name } });
    count(rec, 'create', res.status);
    const outcome = outcomeOf(res.status);
    const rv = outcome === 'ok' ? Number(res.json?.metadata?.resourceVersion) : undefined;
    rec.writes.push({ name, outcome, status: res.status, rv });
    if (outcome === 'unexpected') rec.violations.push(`create ${name} answered ${res.status}: ${JSON.stringify(res.json).slice(0, 200)}`);
    if (rv !== undefined) {
      if (rv <= last) rec.violations.push(`writer ${id}: acknowledged resourceVersion ${rv} after ${last}`);
      last = rv;
    }
    if (outcome !== 'ok') await sleep(100);
  }
}

/** Reads the hot object and swaps its value by resourceVersion, recording both as register operations. */
export async function swapWriter(client: HttpClient, id: string, rec: Records, done: () => boolean): Promise<void> {
  for (let i = 0; !done(); i++) {
    const invoke = performance.now();
    const got = await send(client, 'GET', `${NS_PATH}/hot`);
    count(rec, 'get', got.status);
    if (got.status !== 200 || !got.json) {
      if (outcomeOf(got.status) === 'unexpected') rec.violations.push(`get hot answered ${got.status}`);
      await sleep(100);
      continue;
    }
    const from = String(got.json.data?.v);
    rec.hot.push({ op: { kind: 'read', value: from }, invoke, complete: performance.now() });
    const to = `${id}-${i}`;
    const start = performance.now();
    const res = await send(client, 'PUT', `${NS_PATH}/hot`, { ...got.json, data: { v: to } });
    const end = performance.now();
    count(rec, 'swap', res.status);
    const outcome = outcomeOf(res.status);
    rec.writes.push({ name: 'hot', value: to, outcome, status: res.status, rv: outcome === 'ok' ? Number(res.json?.metadata?.resourceVersion) : undefined });
    if (outcome === 'ok') rec.hot.push({ op: { kind: 'cas', from, to, outcome: 'ok' }, invoke: start, complete: end });
    else if (outcome === 'unknown') rec.hot.push({ op: { kind: 'cas', from, to, outcome: 'info' }, invoke: start, complete: Infinity });
    // A 409 is a compare that failed; a 503 never reached etcd and is left out.
    else if (res.status === 409) rec.hot.push({ op: { kind: 'cas', from, to, outcome: 'fail' }, invoke: start, complete: end });
    else if (outcome === 'unexpected') rec.violations.push(`swap ${to} answered ${res.status}: ${JSON.stringify(res.json).slice(0, 200)}`);
    await sleep(outcome === 'ok' ? 10 : 100);
  }
}

/** Lists through a replica every 200 ms: the list's resourceVersion must never go back. */
export async function rvProber(client: HttpClient, replica: string, rec: Records, done: () => boolean): Promise<void> {
  let last = 0;
  while (!done()) {
    const res = await send(client, 'GET', `${NS_PATH}?limit=1`);
    if (res.status === 200) {
      const rv = Number(res.json?.metadata?.resourceVersion);
      if (rv < last) rec.violations.push(`replica ${replica}: list resourceVersion ${rv} after ${last}`);
      last = Math.max(last, rv);
    }
    await sleep(200);
  }
}

/** What one watcher saw between a list (or its start) and its next relist: events must cover every write in (from, to]. */
export interface Chain {
  from: number;
  to: number;
  events: { type: string; name: string; rv: number; value?: string }[];
}

interface WatchEvent {
  type: string;
  object: { code?: number; metadata?: { name?: string; resourceVersion?: string }; data?: { v?: string } };
}

/**
 * Follows the namespace through one replica, with bookmarks: a watch that ends is resumed from the
 * last resourceVersion seen (an event's or a bookmark's); a 410 closes the chain and starts a new
 * one from a fresh list. Events must come in resourceVersion order with none repeated, and none at
 * or below a bookmark.
 */
export class Watcher {
  readonly chains: Chain[] = [];
  relists = 0;
  resumes = 0;
  private chain: Chain | undefined;
  private current: { close(): void; wake(): void } | undefined;
  private stopped = false;

  constructor(
    private readonly client: HttpClient,
    private readonly replica: string,
    private readonly rec: Records,
  ) {}

  /** The newest resourceVersion the watcher has followed to. */
  get position(): number {
    return this.chain?.to ?? 0;
  }

  async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.chain) await this.relist();
      else await this.follow(this.chain);
    }
  }

  stop(): void {
    this.stopped = true;
    this.current?.close();
    this.current?.wake();
  }

  private async relist(): Promise<void> {
    const res = await send(this.client, 'GET', NS_PATH);
    if (res.status !== 200) return sleep(200);
    const rv = Number(res.json?.metadata?.resourceVersion);
    this.chain = { from: rv, to: rv, events: [] };
    this.chains.push(this.chain);
  }

  /** One watch request from where the chain is; returns when it ends. */
  private async follow(chain: Chain): Promise<void> {
    let wake = (): void => undefined;
    const ended = new Promise<void>((resolve) => (wake = resolve));
    let live = true;
    let handle: { close(): void };
    try {
      const path = `${NS_PATH}?watch=1&allowWatchBookmarks=true&resourceVersion=${chain.to}`;
      handle = await this.client.stream(path, (line) => live && this.receive(chain, line as WatchEvent, wake), undefined, wake);
    } catch {
      return sleep(200);
    }
    this.current = { close: () => handle.close(), wake };
    if (this.stopped) wake();
    await ended;
    // Nothing this request still delivers counts once it is given up.
    live = false;
    handle.close();
    this.current = undefined;
    if (this.chain === chain) this.resumes++;
  }

  private receive(chain: Chain, ev: WatchEvent, end: () => void): void {
    if (ev.type === 'ERROR') {
      if (ev.object.code !== 410) this.rec.violations.push(`watcher ${this.replica}: watch error ${JSON.stringify(ev.object).slice(0, 200)}`);
      this.relists++;
      this.chain = undefined;
      end();
      return;
    }
    if (ev.type === 'BOOKMARK') {
      // Every event up to a bookmark's resourceVersion was sent: the chain covers it, and a resumed watch starts there.
      const at = Number(ev.object.metadata?.resourceVersion);
      if (at < chain.to) this.rec.violations.push(`watcher ${this.replica}: bookmark at ${at} after ${chain.to}`);
      chain.to = Math.max(chain.to, at);
      return;
    }
    const rv = Number(ev.object.metadata?.resourceVersion);
    const name = ev.object.metadata?.name ?? '';
    if (rv <= chain.to) this.rec.violations.push(`watcher ${this.replica}: ${ev.type} ${name} at ${rv} after ${chain.to} (repeated or out of order)`);
    chain.to = Math.max(chain.to, rv);
    chain.events.push({ type: ev.type, name, rv, value: ev.object.data?.v });
  }
}
