/** The status predicates of lib/api-errors.ts read the server's own ApiError as they read a client's. */
import { isConflict, isForbidden, isGone, isInvalid, isNotFound, isRefused } from '../../src/lib/api-errors.js';
import { errors } from '../../src/apiserver/http/errors.js';

it('classifies the server errors by their status, bare or wrapped', () => {
  const notFound = errors.notFound({ group: '', resource: 'configmaps', name: 'x' });
  const wrapped = new Error('while syncing', { cause: notFound });
  expect([isNotFound(notFound), isNotFound(wrapped), isConflict(wrapped)]).toEqual([true, true, false]);
  expect(isConflict(errors.conflict({ group: '', resource: 'configmaps', name: 'x' }, 'changed'))).toBe(true);
  expect(isInvalid(errors.invalid('ConfigMap', '', 'x', []))).toBe(true);
  expect([isForbidden(errors.unauthorized()), isRefused(errors.unauthorized())]).toEqual([false, true]);
  expect(isGone(errors.gone('too old resource version: 1 (2)'))).toBe(true);
  expect([isNotFound(new Error('plain')), isNotFound(undefined), isNotFound({ code: 'ENOENT' })]).toEqual([false, false, false]);
});
