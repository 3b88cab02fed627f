/**
 * upstream's truncate backend (--audit-<plugin>-truncate-*), around a backend and its batching: an
 * event whose JSON is larger than maxEventSize bytes and that carries request or response objects
 * (level Request and above) loses both and gets the `audit.k8s.io/truncated: "true"` annotation; an
 * event still too large is dropped and counted (apiserver_audit_error_total{plugin="truncate"}).
 * The events handed on in one call are split into batches of at most maxBatchSize bytes.
 */
import type { Logger } from '../../log/logger.js';
import { type Backend, pluginError } from './backend.js';
import type { AuditMetrics } from './metrics.js';
import type { AuditEvent } from './types.js';

export interface TruncateConfig {
  maxEventSize: number;
  maxBatchSize: number;
}

export class TruncatingBackend implements Backend {
  constructor(
    private readonly delegate: Backend,
    private readonly config: TruncateConfig,
    private readonly metrics: AuditMetrics,
    private readonly logger: Logger,
  ) {}

  processEvents(events: AuditEvent[]): boolean | Promise<boolean> {
    const { maxEventSize, maxBatchSize } = this.config;
    const results: (boolean | Promise<boolean>)[] = [];
    let batch: AuditEvent[] = [];
    let batchSize = 0;
    let dropped = 0;
    for (let event of events) {
      let size = sizeOf(event);
      if (size > maxEventSize && (event.level === 'Request' || event.level === 'RequestResponse')) {
        event = truncated(event);
        size = sizeOf(event);
      }
      if (size > maxEventSize) {
        dropped++;
        continue;
      }
      if (batch.length > 0 && batchSize + size > maxBatchSize) {
        results.push(this.delegate.processEvents(batch));
        batch = [];
        batchSize = 0;
      }
      batchSize += size;
      batch.push(event);
    }
    if (batch.length > 0) results.push(this.delegate.processEvents(batch));
    if (dropped > 0) pluginError(this.metrics, this.logger, 'truncate', new Error('event is too large even after truncating'), dropped);
    // As upstream: what the backend behind said; a dropped event is counted, not a failure of the request.
    if (results.every((r) => typeof r === 'boolean')) return results.every(Boolean);
    return Promise.all(results).then((all) => all.every(Boolean));
  }

  close(): Promise<void> {
    return this.delegate.close();
  }
}

function sizeOf(event: AuditEvent): number {
  return Buffer.byteLength(JSON.stringify(event));
}

/** The event without its request and response objects, marked as truncated. */
function truncated(event: AuditEvent): AuditEvent {
  const { requestObject: _request, responseObject: _response, ...rest } = event;
  return { ...rest, annotations: { ...event.annotations, 'audit.k8s.io/truncated': 'true' } };
}
