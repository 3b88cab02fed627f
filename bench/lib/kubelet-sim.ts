/**
 * A simulated kubelet for the fleet bench (kwok-style: the API traffic of a node, no containers),
 * with kubelet's defaults: bootstrap token → kubelet client CSR (waited for with a watch on its name)
 * → Node with addresses and status → Lease in kube-node-lease renewed every 10 s (40 s duration;
 * as kubelet's lease controller, five updates in a row, then the Lease read again, 200 ms doubling
 * to 7 s between failed reads) → a kubelet-serving CSR → informers on its own Node (fieldSelector
 * metadata.name) and its pods (spec.nodeName), list then watch, relisting on 410 → node status every
 * 5 min → client certificate rotation, as kubelet's certificate transport: new connections present
 * the new certificate and every open one is closed at once, so requests under way fail and are
 * retried and the watches start again from their last resourceVersion. The bootstrap token and the
 * client certificate each have a transport (bench/lib/fleet-transport.ts): one HTTP/2 connection for
 * everything when the server offers h2, as client-go, else HTTP/1.1 keep-alive connections (one for
 * requests, one per watch). Every request goes through `FleetRecorder`, which keeps latencies by kind,
 * counts errors (apart: those the node's own rotation caused), 429s (honoured: the request or watch
 * is sent again after Retry-After, up to 10 times) and connections opened.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { closedByRotation, openTransport, type StreamReply, type Transport, type TransportTarget } from './fleet-transport.js';
import { CSR_PATH, KUBELET_CLIENT_SIGNER, KUBELET_CLIENT_USAGES } from './kubelet-csr.js';

export type RequestKind = 'mutating' | 'get' | 'list';

/** Where every simulated request is counted. */
export interface FleetRecorder {
  /**
   * A request's latency from the moment its connection was ready (SIG Scalability's SLI: from when the
   * server gets it); `firstOnConnection`: it had waited for that connection (the first sent on it).
   */
  latency(kind: RequestKind, ms: number, leaseRenewal: boolean, firstOnConnection: boolean): void;
  /** How long a request waited for its new connection (TCP and TLS handshakes) before it could be sent. */
  connectWait(ms: number): void;
  error(what: string): void;
  /**
   * A failure the node's own rotation caused, which a kubelet sees too and retries: a request its
   * connection's close cut, or a Lease update's conflict right after its cut (the cut one went through).
   */
  closedByRotation(what: string): void;
  /** A 429 honoured: the Retry-After it was told, and whether it answered a Lease renewal. */
  throttled(retryAfterSeconds: number, leaseRenewal: boolean): void;
  /** A TLS connection was opened. */
  connected(): void;
}

export interface FleetTarget extends TransportTarget {
  bootstrapToken: string;
}

const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
const LEASES = (name = ''): string => `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases${name ? `/${name}` : ''}`;
const LEASE_RENEW_MS = 10_000;
const STATUS_REPORT_MS = 5 * 60_000;
const MAX_RETRIES = 10;
/** kubelet's lease controller: updates tried in a row before the Lease is read again (maxUpdateRetries). */
const LEASE_UPDATE_RETRIES = 5;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const microTime = (): string => new Date().toISOString().replace('Z', '000Z');

/** A request as the fleet's errors name it: verb and resource, without per-node names ("PUT leases", "PATCH nodes/status", "WATCH pods"). */
export function requestLabel(method: string, path: string): string {
  const [p = '', query = ''] = path.split('?');
  // /api/v1/R… or /apis/GROUP/VERSION/R…, a namespace's as namespaces/NS/R…
  let rest = p.split('/').filter(Boolean).slice(p.startsWith('/api/') ? 2 : 3);
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [resource = '', name, subresource] = rest;
  const verb = /(^|&)watch=true(&|$)/.test(query) ? 'WATCH' : method === 'GET' && name === undefined ? 'LIST' : method;
  return `${verb} ${resource}${subresource ? `/${subresource}` : ''}`;
}

class HttpError extends Error {
  constructor(
    request: string,
    readonly status: number,
    body: string,
  ) {
    super(`${request}: HTTP ${status}: ${body.slice(0, 200)}`);
  }
}

/** A request that got no answer, led by what it was; its cause's code is kept (closedByRotation reads it). */
class RequestError extends Error {
  readonly code: unknown;
  constructor(request: string, cause: unknown) {
    super(`${request}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.code = (cause as { code?: unknown } | undefined)?.code;
  }
}

interface Credentials {
  token?: string;
  certPem?: string;
  keyPem?: string;
}

/** A client's transport (the bootstrap token's, or the rotating client certificate's), and the headers its requests carry. */
class Connection {
  readonly transport: Transport;
  constructor(
    target: FleetTarget,
    private creds: Credentials,
    onConnect: () => void,
  ) {
    this.transport = openTransport(target, creds, onConnect);
  }

  headers(body: boolean, contentType = 'application/json'): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json' };
    if (this.creds.token) h.authorization = `Bearer ${this.creds.token}`;
    if (body) h['content-type'] = contentType;
    return h;
  }

  /** Ends the watches at once; requests under way finish first unless `now` (client-go closes idle connections on rotation). */
  close(now = false): void {
    this.transport.close(now);
  }

  /** kubelet's rotation: the next connections present `creds`, the open ones are closed now. */
  rotate(creds: Credentials): void {
    this.creds = creds;
    this.transport.rotate(creds);
  }
}

type Obj = { metadata?: { name?: string; resourceVersion?: string }; status?: { certificate?: string } };

export class SimKubelet {
  clientCertAt = 0;
  servingCertAt = 0;
  /** Watches open (0-2) and when the last renewal succeeded. */
  watchesOpen = 0;
  /** Watches ever opened (a watch open again after a restart counts anew). */
  watchOpens = 0;
  lastRenewal = 0;
  rotations = 0;
  /** watchOpens when the last rotation closed the connections: both watches are open again past it. */
  private watchOpensAtRotation = 0;
  private conn: Connection | undefined;
  private lease: Obj | undefined;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly name: string,
    readonly ip: string,
    private readonly target: FleetTarget,
    private readonly rec: FleetRecorder,
  ) {}

  /** Bootstrap, register, heartbeat, serving certificate and informers; resolves once both certificates are held. */
  async join(): Promise<void> {
    const bootstrap = this.connect({ token: this.target.bootstrapToken });
    try {
      const client = await this.requestCertificate(bootstrap, KUBELET_CLIENT_SIGNER, KUBELET_CLIENT_USAGES, {});
      this.conn = this.connect(client);
      this.clientCertAt = Date.now();
    } finally {
      bootstrap.close();
    }
    await this.register();
    await this.renewLease();
    this.schedule(() => this.heartbeat(), LEASE_RENEW_MS);
    this.schedule(() => this.reportStatus(), STATUS_REPORT_MS * (0.9 + 0.2 * Math.random()));
    this.startInformers();
    const conn = this.current();
    await this.requestCertificate(conn, SERVING_SIGNER, ['digital signature', 'server auth'], { dnsNames: [this.name], ipAddresses: [this.ip] });
    this.servingCertAt = Date.now();
  }

  /**
   * A new client certificate requested with the current one; then, as kubelet's certificate transport
   * (GetClientCertificate, then its dialer's CloseAll), every connection is closed at once and the next
   * ones present the new certificate. Each request or watch picks its connection when it is sent, so
   * none is sent on a transport left behind.
   */
  async rotate(): Promise<void> {
    const conn = this.current();
    const fresh = await this.requestCertificate(conn, KUBELET_CLIENT_SIGNER, KUBELET_CLIENT_USAGES, {});
    this.watchOpensAtRotation = this.watchOpens;
    conn.rotate(fresh);
    this.rotations++;
  }

  /** Rotated, and both watches open again since. */
  get rotated(): boolean {
    return this.rotations > 0 && this.watchesOpen === 2 && this.watchOpens >= this.watchOpensAtRotation + 2;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.conn?.close(true);
  }

  private connect(creds: Credentials): Connection {
    return new Connection(this.target, creds, () => this.rec.connected());
  }

  private current(): Connection {
    if (!this.conn) throw new Error(`${this.name} has no client certificate yet`);
    return this.conn;
  }

  private schedule(fn: () => Promise<void>, ms: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      void fn();
    }, ms);
    this.timers.add(t);
  }

  /** One request, measured; 429 with Retry-After is waited out and sent again, as client-go does. */
  private async call(conn: Connection, kind: RequestKind, method: string, path: string, opts: { body?: unknown; lease?: boolean; contentType?: string } = {}): Promise<Obj> {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const request = requestLabel(method, path);
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      const res = await conn.transport.request(method, path, conn.headers(payload !== undefined, opts.contentType), payload).catch((err: unknown) => {
        throw new RequestError(request, err);
      });
      const text = res.text;
      const retryAfter = Number(res.retryAfter);
      if (res.status === 429 && attempt < MAX_RETRIES && Number.isInteger(retryAfter)) {
        this.rec.throttled(retryAfter, opts.lease ?? false);
        await sleep(retryAfter * 1000);
        continue;
      }
      if (res.connectWaitMs > 0) this.rec.connectWait(res.connectWaitMs);
      if (res.status < 200 || res.status > 299) throw new HttpError(request, res.status, text);
      this.rec.latency(kind, performance.now() - started - res.connectWaitMs, opts.lease ?? false, res.connectWaitMs > 0);
      return JSON.parse(text) as Obj;
    }
  }

  /** A fresh P-256 key, its CSR created as `conn`'s user, and the certificate once the watch on its name sees it. */
  private async requestCertificate(conn: Connection, signerName: string, usages: string[], sans: { dnsNames?: string[]; ipAddresses?: string[] }): Promise<Credentials> {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const pem = await createCertificateRequestPem({ privateKeyPem: keyPem, commonName: `system:node:${this.name}`, organizations: ['system:nodes'], ...sans });
    const csr = { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { generateName: 'csr-' }, spec: { request: Buffer.from(pem).toString('base64'), signerName, usages } };
    const created = await this.retrying(() => this.call(conn, 'mutating', 'POST', CSR_PATH, { body: csr }));
    const name = created.metadata?.name ?? '';
    let rv = created.metadata?.resourceVersion ?? '';
    for (;;) {
      let issued: string | undefined;
      const path = `${CSR_PATH}?watch=true&fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}&resourceVersion=${rv}`;
      await this.watch(conn, path, (obj) => {
        rv = obj.metadata?.resourceVersion ?? rv;
        if (obj.status?.certificate) issued = obj.status.certificate;
        return issued !== undefined;
      }).catch(() => sleep(1000));
      if (issued) return { keyPem, certPem: Buffer.from(issued, 'base64').toString('utf8') };
      if (this.stopped) throw new Error('stopped');
      // The watch ended (a restart, a 410): read the CSR again and watch from there.
      const now = await this.retrying(() => this.call(conn, 'get', 'GET', `${CSR_PATH}/${name}`));
      if (now.status?.certificate) return { keyPem, certPem: Buffer.from(now.status.certificate, 'base64').toString('utf8') };
      rv = now.metadata?.resourceVersion ?? rv;
    }
  }

  /**
   * Streams a watch until `done` says so or the stream ends; rejects on a non-200.
   * A watch whose connection the node's rotation closed has ended, as a reflector sees it: no error.
   */
  private async watch(conn: Connection, path: string, done: (obj: Obj, type: string) => boolean, onOpen?: () => void): Promise<void> {
    const abort = new AbortController();
    const request = requestLabel('GET', path);
    const res = await this.openWatch(conn, path, request, abort.signal);
    onOpen?.();
    let buf = '';
    try {
      for await (const chunk of res.body) {
        buf += (chunk as Buffer).toString('utf8');
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line) as { type: string; object: Obj & { code?: number } };
          if (ev.type === 'ERROR') throw new HttpError(request, ev.object.code ?? 500, line);
          if (done(ev.object, ev.type)) {
            abort.abort();
            return;
          }
        }
      }
    } catch (err) {
      if (abort.signal.aborted || closedByRotation(err)) return;
      throw err instanceof HttpError ? err : new RequestError(request, err);
    }
  }

  /** A watch's 200; one refused with 429 and Retry-After is started again after it, as client-go's Watch does (up to 10 times). */
  private async openWatch(conn: Connection, path: string, request: string, signal: AbortSignal): Promise<StreamReply> {
    const open = (): Promise<StreamReply> =>
      conn.transport.stream(path, conn.headers(false), signal).catch((err: unknown) => {
        throw new RequestError(request, err);
      });
    let res = await open();
    for (let attempt = 0; res.status === 429 && attempt < MAX_RETRIES && Number.isInteger(Number(res.retryAfter)) && !this.stopped; attempt++) {
      await res.text();
      this.rec.throttled(Number(res.retryAfter), false);
      await sleep(Number(res.retryAfter) * 1000);
      res = await open();
    }
    if (res.status !== 200) throw new HttpError(request, res.status, await res.text());
    return res;
  }

  /** Counts a failure: apart from the errors if the node's own rotation caused it. */
  private failed(err: unknown): void {
    const what = err instanceof Error ? err.message : String(err);
    if (closedByRotation(err)) this.rec.closedByRotation(what);
    else this.rec.error(what);
  }

  /** Retries a failing call (server down, a conflict) with kubelet's heartbeat backoff: 200 ms doubling to 7 s. */
  private async retrying<T>(fn: () => Promise<T>): Promise<T> {
    for (let delay = 200; ; delay = Math.min(7000, delay * 2)) {
      try {
        return await fn();
      } catch (err) {
        if (this.stopped) throw err;
        this.failed(err);
        await sleep(delay);
      }
    }
  }

  private async register(): Promise<void> {
    const addresses = [
      { type: 'InternalIP', address: this.ip },
      { type: 'Hostname', address: this.name },
    ];
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: this.name, labels: { 'kubernetes.io/hostname': this.name, type: 'kwok' } }, status: { addresses } };
    await this.retrying(() => this.call(this.current(), 'mutating', 'POST', '/api/v1/nodes', { body: node }));
    await this.reportStatusOnce();
  }

  private statusPatch(): object {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    return {
      status: {
        addresses: [
          { type: 'InternalIP', address: this.ip },
          { type: 'Hostname', address: this.name },
        ],
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }],
      },
    };
  }

  /** kubelet's status update: GET the Node, then a strategic merge patch of its status. */
  private async reportStatusOnce(): Promise<void> {
    await this.retrying(() => this.call(this.current(), 'get', 'GET', `/api/v1/nodes/${this.name}`));
    await this.retrying(() => this.call(this.current(), 'mutating', 'PATCH', `/api/v1/nodes/${this.name}/status`, { body: this.statusPatch(), contentType: 'application/strategic-merge-patch+json' }));
  }

  private async reportStatus(): Promise<void> {
    await this.reportStatusOnce().catch(() => undefined);
    this.schedule(() => this.reportStatus(), STATUS_REPORT_MS);
  }

  /**
   * kubelet's lease controller each period: up to five updates of the Lease it last held, one after
   * another (retryUpdateLease); if they fail, the Lease is read again (backoffEnsureLease: a GET, a
   * create if it is missing, retried 200 ms doubling to 7 s) and updated again up to five times. A
   * round that still fails waits for the next period.
   */
  private async renewLease(): Promise<void> {
    if (this.lease && (await this.updateLease())) return;
    if ((await this.ensureLease()) || this.stopped) return;
    await this.updateLease();
  }

  private leaseSpec(): object {
    return { holderIdentity: this.name, leaseDurationSeconds: 40, renewTime: microTime() };
  }

  /** Up to five updates; a conflict reads the Lease again first. True once one succeeded. */
  private async updateLease(): Promise<boolean> {
    let cut = false;
    for (let i = 0; i < LEASE_UPDATE_RETRIES && !this.stopped; i++) {
      try {
        // The current connection on every attempt: a rotation replaces it while a renewal is retried.
        const lease = this.lease as { spec?: object };
        this.lease = await this.call(this.current(), 'mutating', 'PUT', LEASES(this.name), { body: { ...lease, spec: { ...lease.spec, ...this.leaseSpec() } }, lease: true });
        this.lastRenewal = Date.now();
        return true;
      } catch (err) {
        // A renewal the rotation cut may have been written: sent again, it conflicts (kubelet's too).
        if (cut && err instanceof HttpError && err.status === 409) this.rec.closedByRotation(err.message);
        else this.failed(err);
        cut = closedByRotation(err);
        if (err instanceof HttpError && err.status === 409) await this.ensureLease();
      }
    }
    return false;
  }

  /** The Lease read, or created if missing (then true: a create renews it), retried 200 ms doubling to 7 s. */
  private async ensureLease(): Promise<boolean> {
    for (let delay = 200; !this.stopped; delay = Math.min(7000, delay * 2)) {
      const conn = this.current();
      try {
        try {
          this.lease = await this.call(conn, 'get', 'GET', LEASES(this.name));
          return false;
        } catch (err) {
          if (!(err instanceof HttpError && err.status === 404)) throw err;
        }
        const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.name, namespace: 'kube-node-lease' }, spec: this.leaseSpec() };
        this.lease = await this.call(conn, 'mutating', 'POST', LEASES(), { body: lease, lease: true });
        this.lastRenewal = Date.now();
        return true;
      } catch (err) {
        this.failed(err);
        await sleep(delay);
      }
    }
    return false;
  }

  private async heartbeat(): Promise<void> {
    await this.renewLease();
    this.schedule(() => this.heartbeat(), LEASE_RENEW_MS);
  }

  private startInformers(): void {
    void this.inform(`/api/v1/nodes?fieldSelector=${encodeURIComponent(`metadata.name=${this.name}`)}`);
    void this.inform(`/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${this.name}`)}`);
  }

  /** A reflector: list, then watch from the list's resourceVersion; again from the last one seen when it ends; relist on 410. */
  private async inform(base: string): Promise<void> {
    let rv: string | undefined;
    let delay = 800;
    while (!this.stopped) {
      const conn = this.current();
      try {
        if (rv === undefined) rv = (await this.call(conn, 'list', 'GET', base)).metadata?.resourceVersion ?? '0';
        let open = false;
        await this.watch(conn, `${base}&watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`, (obj) => {
          rv = obj.metadata?.resourceVersion ?? rv;
          return this.stopped;
        }, () => {
          open = true;
          this.watchesOpen++;
          this.watchOpens++;
          delay = 800;
        }).finally(() => {
          if (open) this.watchesOpen--;
        });
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof HttpError && err.status === 410) rv = undefined;
        else this.failed(err);
        await sleep(delay * (1 + Math.random()));
        delay = Math.min(30_000, delay * 2);
      }
    }
  }
}
