/**
 * The errors a patch can fail with, as kube-apiserver's patch handler words them. A patch that
 * decodes but cannot be applied is a 422 with a deliberately generic message and no causes
 * (NewGenericServerResponse); an undecodable one is a 400 with the decoder's text.
 */
import { ApiError, errors } from '../http/errors.js';

export const PATCH_REJECTED_MESSAGE = 'the server rejected our request due to an error in our request';

/** 422 Invalid with upstream's generic text: the underlying reason is not sent, as upstream. */
export function patchRejected(): ApiError {
  return new ApiError(422, 'Invalid', PATCH_REJECTED_MESSAGE, {});
}

export const patchBadRequest = (message: string): ApiError => errors.badRequest(message);

/** mergepatch's sentinel errors; those not listed in `SMP_422` are 400s. */
export const SMP_ERRORS = {
  badJsonDoc: 'invalid JSON document',
  noListOfLists: 'lists of lists are not supported',
  badPrimitiveList: 'invalid patch format of primitive list',
  badRetainKeys: 'invalid patch format of retainKeys',
  badSetElementOrder: 'invalid patch format of setElementOrder list',
  retainKeysMismatch: "patch content doesn't match retainKeys list",
  unsupportedFormat: 'strategic merge patch format is not supported',
} as const;

const SMP_422: readonly string[] = [SMP_ERRORS.noListOfLists, SMP_ERRORS.retainKeysMismatch];

/** interpretStrategicMergePatchError: the two structural errors are 422, the others 400. */
export function smpError(message: string): ApiError {
  return SMP_422.includes(message) ? patchRejected() : errors.badRequest(message);
}
