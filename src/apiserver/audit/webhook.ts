/**
 * The webhook backend (--audit-webhook-config-file): POSTs audit.k8s.io/v1 EventLists to the
 * server of a kubeconfig's current context, with its credentials. A send that fails transiently
 * (connection reset, 429, 500, 504, or any answer with Retry-After, as upstream's
 * DefaultShouldRetry) is retried with upstream's backoff: --audit-webhook-initial-backoff, then
 * ×1.5 with 20% jitter, five attempts in all; what still fails is counted and logged.
 */
import type { ClientRequest } from 'node:http';
import { request, type RequestOptions } from 'node:https';
import type { Logger } from '../../log/logger.js';
import { type Backend, pluginError } from './backend.js';
import type { AuditMetrics } from './metrics.js';
import { AUDIT_API_VERSION, type AuditEvent } from './types.js';

const ATTEMPTS = 5;
const FACTOR = 1.5;
const JITTER = 0.2;
/** upstream's webhook client timeout. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface WebhookTarget {
  url: URL;
  /** TLS material and headers (Authorization) from the kubeconfig. */
  options: RequestOptions;
}

/** The receiver a kubeconfig names, with its CA and the client credentials it gives. */
export async function webhookTarget(kubeconfigFile: string): Promise<WebhookTarget> {
  // Loaded only when a webhook is configured: the client library is large.
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigFile);
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) throw new Error(`audit webhook config ${kubeconfigFile}: no cluster server in the current context`);
  const options: RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  return { url: new URL(cluster.server), options };
}

class SendError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

export class WebhookBackend implements Backend {
  /** Aborted on close: retries stop waiting and requests under way end. */
  private readonly closing = new AbortController();
  private readonly requests = new Set<ClientRequest>();

  constructor(
    private readonly target: WebhookTarget,
    private readonly initialBackoffMs: number,
    private readonly metrics: AuditMetrics,
    private readonly logger: Logger,
  ) {}

  async processEvents(events: AuditEvent[]): Promise<boolean> {
    const body = JSON.stringify({ kind: 'EventList', apiVersion: AUDIT_API_VERSION, metadata: {}, items: events });
    let delay = this.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.post(body);
        return true;
      } catch (err) {
        const retry = err instanceof SendError && err.retry && attempt < ATTEMPTS && !this.closing.signal.aborted;
        if (!retry) {
          pluginError(this.metrics, this.logger, 'webhook', err, events.length);
          return false;
        }
        this.logger.debug({ err, attempt }, 'audit webhook send failed, retrying');
        await this.sleep(delay * (1 + JITTER * Math.random()));
        delay *= FACTOR;
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.closing.signal;
      const done = (): void => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private post(body: string): Promise<void> {
    const { url, options } = this.target;
    return new Promise((resolve, reject) => {
      const req = request(url, {
        ...options,
        method: 'POST',
        headers: { ...options.headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      });
      this.requests.add(req);
      req.on('close', () => this.requests.delete(req));
      req.on('response', (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 300) return resolve();
        const retry = code === 429 || code === 500 || code === 504 || res.headers['retry-after'] !== undefined;
        reject(new SendError(`audit webhook answered ${code}`, retry));
      });
      req.on('timeout', () => req.destroy(new SendError('audit webhook timed out', true)));
      req.on('error', (err: NodeJS.ErrnoException) => {
        reject(err instanceof SendError ? err : new SendError(err.message, err.code === 'ECONNRESET'));
      });
      req.end(body);
    });
  }

  async close(): Promise<void> {
    this.closing.abort();
    for (const req of this.requests) req.destroy(new SendError('audit backend closed', false));
  }
}
