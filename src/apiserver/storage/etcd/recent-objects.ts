/**
 * The objects an EtcdStore decoded or wrote lately, by etcd key: the newest state it has seen of each
 * (and the one before, which the next event's previous value names), bounded, least recently used
 * first out. Two uses:
 * - A value is decoded once: etcd's (key, mod revision) names one value for good, so a watch event
 *   every watch on the prefix receives, its previous value, and a read of what this replica just
 *   wrote reuse the object decoded first (`at`).
 * - An update need not read first: `latest` is the newest state seen, possibly stale (another
 *   replica wrote since, and its event is on its way), which is harmless for a compare-and-swap on
 *   the revision: a stale one fails and the caller reads (as kube-apiserver's GuaranteedUpdate
 *   starts from its watch cache's object).
 * - A watch without etcd's previous values finds a key's state before an event here (`before`) when a
 *   read showed it was still the latest at or after the revision the watch started from.
 */
import type { KObject } from '../../../api/meta.js';

/** An object as it was stored at a revision (its resourceVersion). */
export interface Revisioned {
  object: KObject;
  revision: number;
}

interface Entry {
  /** The newest revision seen for the key; `object` is absent when that revision deleted it. */
  revision: number;
  object?: Revisioned;
  /** The key was still as `revision` left it at this revision (a read at a later revision showed it). */
  asOf: number;
  previous?: Revisioned;
  /** `asOf` of the previous state, when it was the newest. */
  previousAsOf?: number;
}

export class RecentObjects {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly max = 10_000) {}

  /** The object stored under `key` at exactly `revision`, when it is one of the two newest seen. */
  at(key: string, revision: number): Revisioned | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.object?.revision === revision) return e.object;
    return e.previous?.revision === revision ? e.previous : undefined;
  }

  /** The newest state seen of `key`, unless it was deleted since (or never seen). */
  latest(key: string): Revisioned | undefined {
    const e = this.entries.get(key);
    if (!e?.object) return undefined;
    this.touch(key, e);
    return e.object;
  }

  /**
   * The state of `key` just before `revision`, for a watch that started after `since` and delivered no
   * change of the key since: a state seen still current at `since` or later, as a list or read shows
   * (undefined when none is known to be).
   */
  before(key: string, revision: number, since: number): Revisioned | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.revision < revision) return e.asOf >= since ? e.object : undefined;
    return e.revision === revision && (e.previousAsOf ?? -1) >= since ? e.previous : undefined;
  }

  /**
   * `stored` is what the key held at its revision, and still held at `asOf` (a read at that revision
   * returned it); older news than what is known is dropped.
   */
  saw(key: string, stored: Revisioned, asOf = stored.revision): void {
    const e = this.entries.get(key);
    if (!e) {
      this.add(key, { revision: stored.revision, object: stored, asOf });
      return;
    }
    if (stored.revision > e.revision) {
      this.advance(e, stored.revision, asOf);
      e.object = stored;
      this.touch(key, e);
    } else if (stored.revision === e.revision) {
      e.asOf = Math.max(e.asOf, asOf);
    } else if (!e.previous) {
      // An older state (a previous value arriving after the newer one) still saves a decode.
      e.previous = stored;
      e.previousAsOf = asOf;
    }
  }

  /** `key` was deleted at `revision`. */
  deleted(key: string, revision: number): void {
    const e = this.entries.get(key);
    if (!e) {
      this.add(key, { revision, asOf: revision });
    } else if (revision > e.revision) {
      this.advance(e, revision, revision);
      e.object = undefined;
    }
  }

  private advance(e: Entry, revision: number, asOf: number): void {
    e.previous = e.object;
    e.previousAsOf = e.asOf;
    e.revision = revision;
    e.asOf = asOf;
  }

  private add(key: string, e: Entry): void {
    this.entries.set(key, e);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  private touch(key: string, e: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, e);
  }
}
