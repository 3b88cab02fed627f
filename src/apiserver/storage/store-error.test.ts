import { ApiError, toApiError } from '../http/errors.js';
import { isRaceError, isStoreError, StoreError, type StoreErrorCode } from './store.js';

/** The frames of a stack trace (the lines after its header). */
const frames = (e: Error): string[] => (e.stack ?? '').split('\n').slice(1);

describe('StoreError', () => {
  it.each<StoreErrorCode>(['KeyExists', 'KeyNotFound', 'Conflict', 'Compacted', 'FutureRevision'])('%s, an answer, is made without a stack, its fields intact', (code) => {
    const e = new StoreError(code, '/registry/configmaps/default/a', `the ${code} message`, 7);
    expect(e).toBeInstanceOf(Error);
    expect(e).toBeInstanceOf(StoreError);
    expect([e.name, e.code, e.key, e.message, e.revision]).toEqual(['StoreError', code, '/registry/configmaps/default/a', `the ${code} message`, 7]);
    expect(String(e)).toBe(`StoreError: the ${code} message`);
    expect(isStoreError(e, code)).toBe(true);
    expect(frames(e)).toEqual([]);
  });

  it.each<StoreErrorCode>(['Unavailable', 'Timeout', 'Undecodable'])('%s, a failure, keeps its stack', (code) => {
    const e = new StoreError(code, '/registry/secrets/default/s', 'etcd is unavailable');
    expect([e.name, e.code, e.message, e.revision]).toEqual(['StoreError', code, 'etcd is unavailable', undefined]);
    expect(frames(e).length).toBeGreaterThan(0);
    expect(frames(e)[0]).toContain('store-error.test.ts');
  });

  it('leaves the stack limit as it found it, for every other error', () => {
    const limit = Error.stackTraceLimit;
    new StoreError('Compacted', 'k', 'm', 1);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(frames(new Error('bug')).length).toBeGreaterThan(0);
  });

  it('still reads as a race, and answers the same Status', () => {
    expect(isRaceError(new StoreError('Conflict', 'k', 'm', 3))).toBe(true);
    expect(isRaceError(new StoreError('KeyNotFound', 'k', 'm'))).toBe(true);
    const status = toApiError(new StoreError('Unavailable', 'k', 'etcd is unavailable: down'));
    expect(status).toBeInstanceOf(ApiError);
    expect([status.code, status.reason, status.message]).toEqual([503, 'ServiceUnavailable', 'storage is unavailable: etcd is unavailable: down']);
    expect(frames(status)).toEqual([]);
  });
});
