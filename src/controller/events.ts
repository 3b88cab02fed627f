/**
 * Writes core/v1 Events about the objects the controllers act on, the way client-go's recorder does
 * in its simplest form: an Event per (object uid, type, reason, message); a repeat within the
 * de-duplication window bumps `count` and `lastTimestamp` of the Event already written instead of
 * creating another. Events are best effort: a failure is logged and never fails a reconcile.
 * Events about cluster-scoped objects (CSRs) go to the `default` namespace, as upstream's do.
 */
import { randomBytes } from 'node:crypto';
import type { CoreV1Event } from '@kubernetes/client-node';
import type { KObject } from '../api/meta.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../log/logger.js';
import type { KubeClient } from './client/kube-client.js';
import { isNotFound } from './errors.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  client: KubeClient;
  clock: Clock;
  logger: Logger;
  /** `source.component` of every Event (the controller's name). */
  component: string;
  /** How long a written Event is reused for repeats (default 10 minutes, client-go's aggregation window). */
  dedupWindowMs?: number;
  /** Cache bound; the oldest entries go first (default 4096, as client-go's LRU). */
  maxEntries?: number;
}

/** An Event as JSON (timestamps as RFC 3339 strings): it is written raw, without client-node's typed models. */
type EventJSON = Omit<CoreV1Event, 'firstTimestamp' | 'lastTimestamp'> & { firstTimestamp?: string; lastTimestamp?: string };

interface Written {
  /** The Event as the server returned it, as JSON text: parsed only when the Event repeats. */
  reply: string;
  at: number;
}

const eventsPath = (namespace: string): string => `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;

export class EventRecorder {
  private readonly written = new Map<string, Written>();
  private readonly logger: Logger;
  /** The last Event name suffix: starts at random, then counts, so one recorder's names never collide. */
  private suffix = randomBytes(2).readUInt16BE(0);

  constructor(private readonly opts: EventRecorderOptions) {
    this.logger = opts.logger.child({ component: 'events', source: opts.component });
  }

  /** Records an Event about `obj`; resolves once written (or once the failure was logged). */
  async record(obj: KObject, type: EventType, reason: string, message: string): Promise<void> {
    const uid = obj.metadata?.uid ?? '';
    const key = [uid, obj.metadata?.name ?? '', type, reason, message].join('\0');
    const now = this.opts.clock.now();
    const prior = this.written.get(key);
    try {
      if (prior && now - prior.at < (this.opts.dedupWindowMs ?? 600_000)) {
        this.remember(key, await this.bump(JSON.parse(prior.reply) as EventJSON, now), now);
        return;
      }
      this.remember(key, await this.create(obj, type, reason, message, now), now);
    } catch (err) {
      this.logger.info({ err, object: obj.metadata?.name, reason }, 'unable to write event');
    }
  }

  private async create(obj: KObject, type: EventType, reason: string, message: string, now: number): Promise<string> {
    const namespace = obj.metadata?.namespace || 'default';
    const stamp = new Date(now).toISOString();
    const body: EventJSON = {
      metadata: { name: `${obj.metadata?.name ?? 'object'}.${now.toString(16)}${this.nextSuffix()}`, namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata?.name,
        namespace: obj.metadata?.namespace,
        uid: obj.metadata?.uid,
        resourceVersion: obj.metadata?.resourceVersion,
      },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: stamp,
      lastTimestamp: stamp,
      source: { component: this.opts.component },
      reportingComponent: this.opts.component,
      reportingInstance: '',
    };
    return this.opts.client.requestText('POST', eventsPath(namespace), body);
  }

  /**
   * Four hex digits after the timestamp in an Event name: a counter from a random start, so names
   * within one millisecond differ (random digits per Event collided and cost a randomBytes call each).
   */
  private nextSuffix(): string {
    this.suffix = (this.suffix + 1) & 0xffff;
    return this.suffix.toString(16).padStart(4, '0');
  }

  /** A repeat: count+1 on the Event already written; if it vanished, write a fresh one. */
  private async bump(event: EventJSON, now: number): Promise<string> {
    const stamp = new Date(now).toISOString();
    const body: EventJSON = { ...event, count: (event.count ?? 1) + 1, lastTimestamp: stamp };
    body.metadata = { ...event.metadata, resourceVersion: undefined };
    const namespace = event.metadata.namespace ?? 'default';
    const client = this.opts.client;
    try {
      return await client.requestText('PUT', `${eventsPath(namespace)}/${encodeURIComponent(event.metadata.name ?? '')}`, body);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      body.count = 1;
      body.firstTimestamp = stamp;
      return client.requestText('POST', eventsPath(namespace), body);
    }
  }

  private remember(key: string, reply: string, at: number): void {
    this.written.delete(key);
    this.written.set(key, { reply, at });
    const max = this.opts.maxEntries ?? 4096;
    while (this.written.size > max) this.written.delete(this.written.keys().next().value as string);
  }
}
