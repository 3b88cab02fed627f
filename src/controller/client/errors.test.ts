import { HttpStatusError } from './kube-client.js';
import { httpStatusOf, isConflict, isNotFound } from '../../lib/api-errors.js';
import { classifyError, RequeueError, TerminalError, wrapError } from './errors.js';

/** A wrapper that knows nothing of classification: it only keeps the cause, as any library's might. */
class ContextError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
  }
}

describe('error classification through the cause chain', () => {
  const conflict = new HttpStatusError(409, { kind: 'Status', reason: 'Conflict', message: 'the object has been modified' });

  it('classifies an API error by its status, bare or under any number of wrappers', () => {
    expect(classifyError(conflict)).toBe('conflict');
    expect(classifyError(wrapError('error updating approval for csr', conflict))).toBe('conflict');
    expect(classifyError(new ContextError('outer', wrapError('inner', conflict)))).toBe('conflict');
    expect(classifyError(new ContextError('outer', new HttpStatusError(404, undefined)))).toBe('notFound');
    expect(classifyError(new ContextError('outer', new HttpStatusError(500, undefined)))).toBe('retry');
    // client-node's ApiException carries the status as `code`, a watch error as `statusCode`.
    expect(classifyError(new ContextError('outer', { code: 409 }))).toBe('conflict');
    expect(classifyError(new ContextError('outer', { statusCode: 404 }))).toBe('notFound');
    expect(isConflict(new ContextError('a', new ContextError('b', conflict)))).toBe(true);
    expect(isNotFound(new ContextError('a', conflict))).toBe(false);
  });

  it('finds the project classes anywhere on the chain', () => {
    expect(classifyError(new ContextError('outer', new TerminalError('bad spec')))).toBe('terminal');
    expect(classifyError(wrapError('outer', new RequeueError('not yet')))).toBe('conflict');
    expect(classifyError(new ContextError('a', new ContextError('b', new TerminalError('bad spec'))))).toBe('terminal');
  });

  it('the outermost status wins, as the nearest context does in Go', () => {
    const outer = Object.assign(new ContextError('gone', conflict), { code: 410 });
    expect(httpStatusOf(outer)).toBe(410);
    expect(classifyError(outer)).toBe('retry');
  });

  it('ignores string codes (Node system errors) and ends on cycles and non-objects', () => {
    const sys = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(classifyError(new ContextError('outer', sys))).toBe('retry');
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(classifyError(a)).toBe('retry');
    expect(classifyError(new ContextError('outer', 'a string'))).toBe('retry');
    expect(classifyError(undefined)).toBe('retry');
  });

  it('wrapError keeps the message chain readable', () => {
    const e = wrapError('error updating signature for csr', conflict);
    expect(e.message).toBe('error updating signature for csr: the object has been modified');
    expect(e.cause).toBe(conflict);
    expect(wrapError('x', 'plain').message).toBe('x: plain');
  });
});
