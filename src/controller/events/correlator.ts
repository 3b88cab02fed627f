/**
 * Which Event an occurrence belongs to, decided in memory as client-go's event libraries decide it:
 * - isomorphic occurrences (same object, type, reason, action and note) within `seriesFinishMs` of
 *   each other are one Event whose series.count grows (tools/events' isomorphic key and series);
 * - similar occurrences about different objects of one kind (same component, type, reason) are
 *   Events of their own up to `maxSimilar` without a pause of `similarWindowMs`; after that they are
 *   folded into one combined Event for the kind, itself a series (tools/record's EventAggregator).
 *   client-go's aggregation key is per object; ours is per kind, because each routine event of a CSR
 *   controller is about a new object and would otherwise cost one API request per CSR.
 * Nothing here writes: the broadcaster writes what `observe` and `pending` hand it.
 */
import type { KObject } from '../../api/meta.js';

export type EventType = 'Normal' | 'Warning';

/** What the Event is about (involvedObject / regarding). */
export interface ObjectRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface Occurrence {
  component: string;
  regarding: ObjectRef;
  type: EventType;
  reason: string;
  /** What was done or failed (events.k8s.io/v1 `action`): Approve, Sign... */
  action: string;
  note: string;
}

/** One Event as the correlator keeps it: what it says and how many occurrences the server has seen. */
export interface Series {
  readonly key: string;
  /** The occurrence the Event was created for (its note, for a combined Event, is prefixed). */
  readonly occurrence: Occurrence;
  readonly firstAt: number;
  lastAt: number;
  count: number;
  /** Occurrences the server holds: 0 until the Event was created. */
  writtenCount: number;
  /** The Event's metadata.name, chosen by the writer at its first write. */
  name?: string;
}

export const COMBINED_PREFIX = '(combined from similar events): ';

export interface CorrelatorOptions {
  /** Distinct objects with separate Events before similar ones are combined (client-go: 10). */
  maxSimilar?: number;
  /** A pause this long restarts the similar count (client-go: 10 minutes). */
  similarWindowMs?: number;
  /** A series with no occurrence for this long is finished; a new occurrence starts a new Event (client-go: 6 minutes). */
  seriesFinishMs?: number;
  /** Bound on remembered series; the oldest go first (client-go's LRU: 4096). */
  maxEntries?: number;
}

export function objectRef(obj: KObject): ObjectRef {
  const m = obj.metadata;
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: m?.name, namespace: m?.namespace, uid: m?.uid, resourceVersion: m?.resourceVersion };
}

const join = (...parts: (string | undefined)[]): string => parts.map((p) => p ?? '').join('\0');

export class EventCorrelator {
  private readonly series = new Map<string, Series>();
  private readonly similar = new Map<string, { objects: number; lastAt: number }>();
  private readonly maxSimilar: number;
  private readonly similarWindowMs: number;
  private readonly seriesFinishMs: number;
  private readonly maxEntries: number;

  constructor(o: CorrelatorOptions = {}) {
    this.maxSimilar = o.maxSimilar ?? 10;
    this.similarWindowMs = o.similarWindowMs ?? 600_000;
    this.seriesFinishMs = o.seriesFinishMs ?? 360_000;
    this.maxEntries = o.maxEntries ?? 4096;
  }

  /** Counts an occurrence; returns its series (count 1: a new Event to create). */
  observe(o: Occurrence, now: number): Series {
    const r = o.regarding;
    const own = join(o.component, o.type, o.reason, o.action, r.uid, r.namespace, r.name, o.note);
    const repeat = this.live(own, now);
    if (repeat) return this.bump(repeat, now);
    const similarKey = join(o.component, o.type, o.reason, r.apiVersion, r.kind);
    const sim = this.similar.get(similarKey);
    if (sim && now - sim.lastAt < this.similarWindowMs && sim.objects >= this.maxSimilar) {
      sim.lastAt = now;
      const combinedKey = `combined\0${similarKey}`;
      const combined = this.live(combinedKey, now);
      if (combined) return this.bump(combined, now);
      const regarding: ObjectRef = { apiVersion: r.apiVersion, kind: r.kind };
      return this.add({ key: combinedKey, occurrence: { ...o, regarding, note: COMBINED_PREFIX + o.note }, firstAt: now, lastAt: now, count: 1, writtenCount: 0 });
    }
    const fresh = !sim || now - sim.lastAt >= this.similarWindowMs;
    this.similar.set(similarKey, { objects: fresh ? 1 : sim.objects + 1, lastAt: now });
    return this.add({ key: own, occurrence: o, firstAt: now, lastAt: now, count: 1, writtenCount: 0 });
  }

  /** Drops a series (its Event could not be written): the next occurrence starts afresh. */
  forget(s: Series): void {
    if (this.series.get(s.key) === s) this.series.delete(s.key);
  }

  /**
   * Series with occurrences the server has not seen yet; forgets finished series and similar counts
   * whose window passed. A finished series still unwritten is returned once more, for its final count.
   */
  pending(now: number): Series[] {
    const out: Series[] = [];
    for (const s of this.series.values()) {
      if (s.count > s.writtenCount) out.push(s);
      if (now - s.lastAt >= this.seriesFinishMs) this.series.delete(s.key);
    }
    for (const [k, v] of this.similar) if (now - v.lastAt >= this.similarWindowMs) this.similar.delete(k);
    return out;
  }

  get size(): number {
    return this.series.size;
  }

  private live(key: string, now: number): Series | undefined {
    const s = this.series.get(key);
    return s && now - s.lastAt < this.seriesFinishMs ? s : undefined;
  }

  private bump(s: Series, now: number): Series {
    s.count++;
    s.lastAt = now;
    return s;
  }

  private add(s: Series): Series {
    this.series.delete(s.key);
    this.series.set(s.key, s);
    while (this.series.size > this.maxEntries) this.series.delete(this.series.keys().next().value as string);
    return s;
  }
}
