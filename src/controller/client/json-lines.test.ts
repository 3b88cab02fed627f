import { JsonLinesReader, LineSplitter } from './json-lines.js';

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

describe('JsonLinesReader', () => {
  const collect = () => {
    const values: unknown[] = [];
    const ends: unknown[] = [];
    let closed = 0;
    const reader = new JsonLinesReader({ onValue: (v) => values.push(v), onEnd: (err) => ends.push(err ?? 'clean') });
    reader.attach(() => closed++);
    return { reader, values, ends, closed: () => closed };
  };

  it('parses each line and reports a clean end once', () => {
    const r = collect();
    r.reader.data(Buffer.from('{"n":1}\n{"n"'));
    r.reader.data(Buffer.from(':2}\n'));
    r.reader.end();
    r.reader.end();
    expect(r.values).toEqual([{ n: 1 }, { n: 2 }]);
    expect(r.ends).toEqual(['clean']);
  });

  it('fails a stream that ends inside an event', () => {
    const r = collect();
    r.reader.data(Buffer.from('{"n":1}\n{"n":'));
    r.reader.end();
    expect(r.values).toEqual([{ n: 1 }]);
    expect(r.ends).toHaveLength(1);
    expect(String(r.ends[0])).toMatch(/ended inside an event/);
  });

  it('ends on a line that is not JSON, closes the stream and ignores what follows', () => {
    const r = collect();
    r.reader.data(Buffer.from('{"n":1}\nnot json\n{"n":3}\n'));
    r.reader.data(Buffer.from('{"n":4}\n'));
    r.reader.end(new Error('aborted'));
    expect(r.values).toEqual([{ n: 1 }]);
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]).toBeInstanceOf(SyntaxError);
    expect(r.closed()).toBe(1);
  });

  it('reports a read error, and nothing after stop()', () => {
    const failing = collect();
    failing.reader.end(new Error('socket hang up'));
    expect(failing.ends).toEqual([new Error('socket hang up')]);

    const s = collect();
    s.reader.stop();
    s.reader.stop();
    s.reader.end(new Error('aborted by stop'));
    expect(s.closed()).toBe(1);
    expect(s.ends).toEqual(['clean']);
  });

  it('closes a stream attached after it ended', () => {
    const reader = new JsonLinesReader({ onValue: () => {}, onEnd: () => {} });
    reader.data(Buffer.from('{\n'));
    let closed = 0;
    reader.attach(() => closed++);
    expect(closed).toBe(1);
  });
});
