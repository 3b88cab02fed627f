/**
 * The revisions of the kept history grouped by directory (a key up to its last '/': one resource
 * in one namespace, or one cluster-scoped resource), so a watch's backlog reads the events under
 * its prefix instead of every event after its start revision. In a join storm most events are
 * other resources' (Leases, CSRs, Nodes), and each kubelet's watches start a few hundred revisions back.
 */
import { partitionPoint } from '../../lib/partition-point.js';

export class HistoryIndex {
  /** Ascending revisions per directory; entries at or below the compacted revision are dropped by `trim`. */
  private readonly byDir = new Map<string, number[]>();
  /** The keys of `byDir`, sorted, so the directories under a prefix are one contiguous run. */
  private dirs: string[] = [];

  add(key: string, revision: number): void {
    const dir = dirOf(key);
    const revisions = this.byDir.get(dir);
    if (revisions) {
      revisions.push(revision);
      return;
    }
    this.byDir.set(dir, [revision]);
    this.dirs.splice(partitionPoint(this.dirs.length, (i) => this.dirs[i]! < dir), 0, dir);
  }

  /**
   * The revisions after `from` of every directory that can hold keys under `prefix`, ascending:
   * a superset when `prefix` ends inside a name (its own directory's other keys), so callers still
   * test each event's key.
   */
  revisionsAfter(from: number, prefix: string): number[] {
    const runs: number[][] = [];
    const take = (dir: string): void => {
      const revisions = this.byDir.get(dir);
      if (!revisions) return;
      const start = firstAfter(revisions, from);
      if (start < revisions.length) runs.push(revisions.slice(start));
    };
    // A prefix ending inside a name ("/registry/core/nodes/a") also matches keys in its own directory.
    const own = dirOf(prefix);
    if (own !== prefix) take(own);
    for (let i = partitionPoint(this.dirs.length, (j) => this.dirs[j]! < prefix); i < this.dirs.length && this.dirs[i]!.startsWith(prefix); i++) take(this.dirs[i]!);
    return runs.length === 1 ? runs[0]! : runs.flat().sort((a, b) => a - b);
  }

  /** Forgets the revisions at or below `compacted`, and directories left without any. */
  trim(compacted: number): void {
    let emptied = false;
    for (const [dir, revisions] of this.byDir) {
      const start = firstAfter(revisions, compacted);
      if (start === revisions.length) {
        this.byDir.delete(dir);
        emptied = true;
      } else if (start > 0) {
        this.byDir.set(dir, revisions.slice(start));
      }
    }
    if (emptied) this.dirs = this.dirs.filter((dir) => this.byDir.has(dir));
  }
}

function dirOf(key: string): string {
  return key.slice(0, key.lastIndexOf('/') + 1);
}

/** First index whose revision is > `revision`. */
function firstAfter(revisions: readonly number[], revision: number): number {
  return partitionPoint(revisions.length, (i) => revisions[i]! <= revision);
}
