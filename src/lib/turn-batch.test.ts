import { KeyedTurnBatch, TurnBatch } from './turn-batch.js';

describe('TurnBatch', () => {
  it('starts once for the callers of one turn, after all of them, and anew for a caller once it started', async () => {
    const log: string[] = [];
    let starts = 0;
    const batch = new TurnBatch(() => (log.push('start'), ++starts));
    const first = [batch.join(), batch.join()];
    log.push('joined');
    const late = first[0]!.then(() => batch.join());
    expect(await Promise.all([...first, late])).toEqual([1, 1, 2]);
    expect(log).toEqual(['joined', 'start', 'start']);
  });

  it('rejects every caller of the batch whose work throws, and the next batch starts afresh', async () => {
    let fail = true;
    const batch = new TurnBatch(() => {
      if (fail) throw new Error('store unavailable');
      return 'ok';
    });
    const failed = await Promise.allSettled([batch.join(), batch.join()]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await batch.join()).toBe('ok');
  });
});

describe('KeyedTurnBatch', () => {
  it('shares one start per key among the callers of one turn, and forgets the key once started', async () => {
    const started: string[] = [];
    const batch = new KeyedTurnBatch((key) => (started.push(key), `${key}#${started.length}`));
    const first = [batch.join('a'), batch.join('b'), batch.join('a')];
    expect(started).toEqual([]);
    expect(await Promise.all(first)).toEqual(['a#1', 'b#2', 'a#1']);
    expect(await batch.join('a')).toBe('a#3');
    expect(started).toEqual(['a', 'b', 'a']);
  });

  it('rejects every caller of a key whose work throws, and that key starts afresh next time', async () => {
    let fail = true;
    const batch = new KeyedTurnBatch((key) => {
      if (fail) throw new Error(`no ${key}`);
      return key;
    });
    const failed = await Promise.allSettled([batch.join('x'), batch.join('x')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await batch.join('x')).toBe('x');
  });
});
