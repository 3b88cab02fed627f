import { PassThrough } from 'node:stream';
import { LineSplitter, readJsonLines } from './json-lines.js';

describe('LineSplitter', () => {
  it('splits on newlines, joins a line cut anywhere (inside a UTF-8 character too) and skips empty lines', () => {
    const text = '{"a":"ü漢"}\n\n{"b":2}\n{"c":3}\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const lines: string[] = [];
      const splitter = new LineSplitter();
      splitter.push(bytes.subarray(0, cut), (l) => lines.push(l));
      splitter.push(bytes.subarray(cut), (l) => lines.push(l));
      expect(lines).toEqual(['{"a":"ü漢"}', '{"b":2}', '{"c":3}']);
      expect(splitter.pendingBytes()).toBe(0);
    }
  });

  it('keeps an unfinished line across many chunks', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter();
    for (const part of ['{"x"', ':', '1', '}']) splitter.push(Buffer.from(part), (l) => lines.push(l));
    expect(lines).toEqual([]);
    expect(splitter.pendingBytes()).toBe(7);
    splitter.push(Buffer.from('\n'), (l) => lines.push(l));
    expect(lines).toEqual(['{"x":1}']);
  });

  it('refuses a line longer than the bound instead of buffering it', () => {
    const splitter = new LineSplitter();
    splitter.push(Buffer.from('{"a":"'), () => {}, 16);
    expect(() => splitter.push(Buffer.from('0123456789abcdef'), () => {}, 16)).toThrow('watch event longer than 16 bytes');
  });
});

describe('readJsonLines', () => {
  const collect = (body: PassThrough) => {
    const values: unknown[] = [];
    const ends: unknown[] = [];
    const stop = readJsonLines(body, { onValue: (v) => values.push(v), onEnd: (err) => ends.push(err ?? 'clean') });
    return { values, ends, stop };
  };
  const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

  it('parses each line and reports a clean end once', async () => {
    const body = new PassThrough();
    const r = collect(body);
    body.write('{"n":1}\n{"n"');
    body.end(':2}\n');
    await tick();
    expect(r.values).toEqual([{ n: 1 }, { n: 2 }]);
    expect(r.ends).toEqual(['clean']);
  });

  it('fails a stream that ends inside an event', async () => {
    const body = new PassThrough();
    const r = collect(body);
    body.end('{"n":1}\n{"n":');
    await tick();
    expect(r.values).toEqual([{ n: 1 }]);
    expect(r.ends).toHaveLength(1);
    expect(String(r.ends[0])).toMatch(/ended inside an event/);
  });

  it('reports a read error, and nothing after stop()', async () => {
    const failing = new PassThrough();
    const f = collect(failing);
    failing.destroy(new Error('socket hang up'));
    await tick();
    expect(f.ends).toEqual([new Error('socket hang up')]);

    const stopped = new PassThrough();
    const s = collect(stopped);
    s.stop();
    s.stop();
    expect(stopped.destroyed).toBe(true);
    expect(s.ends).toEqual(['clean']);
  });
});
