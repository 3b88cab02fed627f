/**
 * A simulated kubelet for the fleet bench (kwok-style: the API traffic of a node, no containers),
 * with kubelet's defaults: bootstrap token → kubelet client CSR (waited for with a watch on its name)
 * → Node with addresses and status → Lease in kube-node-lease renewed every 10 s (40 s duration;
 * a failed renewal is retried after 200 ms doubling to 7 s) → a kubelet-serving CSR → informers on
 * its own Node (fieldSelector metadata.name) and its pods (spec.nodeName), list then watch, relisting
 * on 410 → node status every 5 min → client certificate rotation, after which every connection is
 * closed and the watches start again, as kubelet's rotating transport does. Each credential has its
 * own transport (bench/lib/fleet-transport.ts): one HTTP/2 connection for everything when the server
 * offers h2, as client-go, else HTTP/1.1 keep-alive connections (one for requests, one per watch).
 * Every request goes through `FleetRecorder`, which keeps latencies by kind, counts errors, 429s
 * (honoured: the request or watch is sent again after Retry-After, up to 10 times) and connections opened.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { openTransport, type Transport, type TransportTarget } from './fleet-transport.js';
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

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const microTime = (): string => new Date().toISOString().replace('Z', '000Z');

class HttpError extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`HTTP ${status}: ${body.slice(0, 200)}`);
  }
}

interface Credentials {
  token?: string;
  certPem?: string;
  keyPem?: string;
}

/** One credential's transport, and the headers its requests carry. */
class Connection {
  readonly transport: Transport;
  constructor(
    target: FleetTarget,
    readonly creds: Credentials,
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
  private conn: Connection | undefined;
  private lease: Obj | undefined;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private generation = 0;

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

  /** A new client certificate requested with the current one; then every connection starts over. */
  async rotate(): Promise<void> {
    const old = this.current();
    const fresh = await this.requestCertificate(old, KUBELET_CLIENT_SIGNER, KUBELET_CLIENT_USAGES, {});
    this.conn = this.connect(fresh);
    this.generation++;
    old.close();
    this.rotations++;
    this.watchesOpen = 0;
    this.startInformers();
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
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      const res = await conn.transport.request(method, path, conn.headers(payload !== undefined, opts.contentType), payload);
      const text = res.text;
      const retryAfter = Number(res.retryAfter);
      if (res.status === 429 && attempt < MAX_RETRIES && Number.isInteger(retryAfter)) {
        this.rec.throttled(retryAfter, opts.lease ?? false);
        await sleep(retryAfter * 1000);
        continue;
      }
      if (res.connectWaitMs > 0) this.rec.connectWait(res.connectWaitMs);
      if (res.status < 200 || res.status > 299) throw new HttpError(res.status, text);
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
   * Streams a watch until `done` says so or the stream ends; rejects on a non-200. A watch refused
   * with 429 and Retry-After is started again after it, as client-go's Watch does (up to 10 times).
   */
  private async watch(conn: Connection, path: string, done: (obj: Obj, type: string) => boolean, onOpen?: () => void): Promise<void> {
    const abort = new AbortController();
    let res = await conn.transport.stream(path, conn.headers(false), abort.signal);
    for (let attempt = 0; res.status === 429 && attempt < MAX_RETRIES && Number.isInteger(Number(res.retryAfter)) && !this.stopped; attempt++) {
      await res.text();
      this.rec.throttled(Number(res.retryAfter), false);
      await sleep(Number(res.retryAfter) * 1000);
      res = await conn.transport.stream(path, conn.headers(false), abort.signal);
    }
    if (res.status !== 200) throw new HttpError(res.status, await res.text());
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
          if (ev.type === 'ERROR') throw new HttpError(ev.object.code ?? 500, line);
          if (done(ev.object, ev.type)) {
            abort.abort();
            return;
          }
        }
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
  }

  /** Retries a failing call (server down, a conflict) with kubelet's heartbeat backoff: 200 ms doubling to 7 s. */
  private async retrying<T>(fn: () => Promise<T>): Promise<T> {
    for (let delay = 200; ; delay = Math.min(7000, delay * 2)) {
      try {
        return await fn();
      } catch (err) {
        if (this.stopped) throw err;
        this.rec.error(err instanceof Error ? err.message : String(err));
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

  private async renewLease(): Promise<void> {
    const spec = { holderIdentity: this.name, leaseDurationSeconds: 40, renewTime: microTime() };
    for (let delay = 200; !this.stopped; delay = Math.min(7000, delay * 2)) {
      // The current connection on every attempt: a rotation replaces it while a renewal is retried.
      const conn = this.current();
      try {
        if (!this.lease) {
          this.lease = await this.call(conn, 'mutating', 'POST', LEASES(), { body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.name, namespace: 'kube-node-lease' }, spec }, lease: true });
        } else {
          this.lease = await this.call(conn, 'mutating', 'PUT', LEASES(this.name), { body: { ...this.lease, spec: { ...(this.lease as { spec?: object }).spec, ...spec } }, lease: true });
        }
        this.lastRenewal = Date.now();
        return;
      } catch (err) {
        this.rec.error(err instanceof Error ? err.message : String(err));
        // A conflict or a lost create: read the Lease again, as kubelet's lease controller does.
        if (err instanceof HttpError && (err.status === 409 || err.status === 404)) {
          this.lease = await this.call(conn, 'get', 'GET', LEASES(this.name)).catch(() => undefined);
        }
        await sleep(delay);
      }
    }
  }

  private async heartbeat(): Promise<void> {
    await this.renewLease();
    this.schedule(() => this.heartbeat(), LEASE_RENEW_MS);
  }

  private startInformers(): void {
    const generation = this.generation;
    void this.inform(`/api/v1/nodes?fieldSelector=${encodeURIComponent(`metadata.name=${this.name}`)}`, generation);
    void this.inform(`/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${this.name}`)}`, generation);
  }

  /** A reflector: list, then watch from the list's resourceVersion; again from the last one seen when it ends; relist on 410. */
  private async inform(base: string, generation: number): Promise<void> {
    let rv: string | undefined;
    let delay = 800;
    while (!this.stopped && generation === this.generation) {
      const conn = this.current();
      try {
        if (rv === undefined) rv = (await this.call(conn, 'list', 'GET', base)).metadata?.resourceVersion ?? '0';
        let open = false;
        await this.watch(conn, `${base}&watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`, (obj) => {
          rv = obj.metadata?.resourceVersion ?? rv;
          return this.stopped || generation !== this.generation;
        }, () => {
          open = true;
          this.watchesOpen++;
          this.watchOpens++;
          delay = 800;
        }).finally(() => {
          if (open && generation === this.generation) this.watchesOpen--;
        });
      } catch (err) {
        if (this.stopped || generation !== this.generation) return;
        if (err instanceof HttpError && err.status === 410) rv = undefined;
        else this.rec.error(err instanceof Error ? err.message : String(err));
        await sleep(delay * (1 + Math.random()));
        delay = Math.min(30_000, delay * 2);
      }
    }
  }
}
