import type { KObject } from '../../../api/meta.js';
import { RecentObjects } from './recent-objects.js';

const at = (name: string, revision: number): { object: KObject; revision: number } => ({ object: { metadata: { name, resourceVersion: String(revision) } }, revision });

describe('RecentObjects', () => {
  it('keeps the newest state of a key and the one before it, by exact revision', () => {
    const recent = new RecentObjects();
    const v1 = at('a', 5);
    const v2 = at('a', 9);
    recent.saw('/a', v1);
    recent.saw('/a', v2);
    expect(recent.latest('/a')).toBe(v2);
    expect(recent.at('/a', 9)).toBe(v2);
    expect(recent.at('/a', 5)).toBe(v1);
    expect(recent.at('/a', 7)).toBeUndefined();
    recent.saw('/a', at('a', 12));
    expect(recent.at('/a', 5)).toBeUndefined();
    expect(recent.at('/a', 9)).toBe(v2);
  });

  it('never lets older news replace newer: an event that arrives late keeps the newest as latest', () => {
    const recent = new RecentObjects();
    const newest = at('a', 20);
    recent.saw('/a', newest);
    const late = at('a', 11);
    recent.saw('/a', late);
    expect(recent.latest('/a')).toBe(newest);
    // Still reused when its revision is asked for (a previous value that came after).
    expect(recent.at('/a', 11)).toBe(late);
  });

  it('answers no latest state for a deleted key, and an older state seen afterwards does not bring it back', () => {
    const recent = new RecentObjects();
    recent.saw('/a', at('a', 3));
    recent.deleted('/a', 8);
    expect(recent.latest('/a')).toBeUndefined();
    recent.saw('/a', at('a', 6));
    expect(recent.latest('/a')).toBeUndefined();
    const again = at('a', 10);
    recent.saw('/a', again);
    expect(recent.latest('/a')).toBe(again);
    recent.deleted('/b', 4);
    recent.saw('/b', at('b', 2));
    expect(recent.latest('/b')).toBeUndefined();
  });

  it('holds at most its bound, forgetting the least recently used key first', () => {
    const recent = new RecentObjects(2);
    recent.saw('/a', at('a', 1));
    recent.saw('/b', at('b', 2));
    recent.latest('/a');
    recent.saw('/c', at('c', 3));
    expect(recent.latest('/b')).toBeUndefined();
    expect(recent.latest('/a')?.revision).toBe(1);
    expect(recent.latest('/c')?.revision).toBe(3);
  });
  it('gives the state before an event from a read that showed it current at or after the watch start, and nothing it cannot vouch for', () => {
    const recent = new RecentObjects();
    const listed = at('a', 5);
    // A list at revision 20 returned the key as written at 5.
    recent.saw('/a', listed, 20);
    expect(recent.before('/a', 30, 20)).toBe(listed);
    expect(recent.before('/a', 30, 15)).toBe(listed);
    // A watch from 25 has not delivered what may have changed the key between 20 and 25.
    expect(recent.before('/a', 30, 25)).toBeUndefined();
    // Once the event itself is decoded (another watcher of it came first), its previous state still answers.
    recent.saw('/a', at('a', 30));
    expect(recent.before('/a', 30, 20)).toBe(listed);
    expect(recent.before('/a', 30, 25)).toBeUndefined();
    // A state seen only at its own revision vouches for nothing later; a read at 40 makes it current then.
    const v30 = recent.latest('/a')!;
    expect(recent.before('/a', 45, 35)).toBeUndefined();
    recent.saw('/a', { ...v30 }, 40);
    expect(recent.before('/a', 45, 35)).toBe(v30);
    // A deletion is no previous state of an update.
    recent.deleted('/a', 50);
    expect(recent.before('/a', 60, 50)).toBeUndefined();
    expect(recent.before('/b', 60, 0)).toBeUndefined();
  });
});
