/**
 * The one error catalog of the API server. Every failure a handler can meet is an ApiError that
 * renders to a meta/v1 Status with Kubernetes' exact reason, code and message format; anything
 * else reaching the pipeline becomes a 500 InternalError (and is a bug).
 */
import type { Status, StatusCause, StatusDetails } from '../../api/meta.js';
import { type FieldError, fieldErrorString } from './field-errors.js';
import { StoreError } from '../storage/store.js';
import { AnswerError } from '../../lib/answer-error.js';

/** Identifies the target of an error as upstream does: group, resource (plural) and name. */
export interface Target {
  group: string;
  resource: string;
  name?: string;
}

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** A Status: an answer, made without a stack. */
export class ApiError extends AnswerError {
  readonly headers: Record<string, string> = {};
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details && Object.keys(this.details).length > 0) status.details = this.details;
    return status;
  }
}

function gr(t: Target): string {
  return t.group === '' ? t.resource : `${t.resource}.${t.group}`;
}

function details(t: Target, extra: Partial<StatusDetails> = {}): StatusDetails {
  const d: StatusDetails = {};
  if (t.name) d.name = t.name;
  if (t.group) d.group = t.group;
  d.kind = t.resource;
  return { ...d, ...extra };
}

export const errors = {
  notFound: (t: Target): ApiError => new ApiError(404, 'NotFound', `${gr(t)} "${t.name ?? ''}" not found`, details(t)),

  /** An unknown URL: no such resource or path. */
  pathNotFound: (): ApiError => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {}),

  alreadyExists: (t: Target): ApiError =>
    new ApiError(409, 'AlreadyExists', `${gr(t)} "${t.name ?? ''}" already exists`, details(t)),

  conflict: (t: Target, why: string): ApiError =>
    new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${gr(t)} "${t.name ?? ''}": ${why}`, details(t)),

  /** 422: `Kind.group "name" is invalid: field: body, ...` with one cause per field error. */
  invalid: (kind: string, group: string, name: string, errs: FieldError[]): ApiError => {
    const qualified = group === '' ? kind : `${kind}.${group}`;
    const texts = errs.map(fieldErrorString);
    const list = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
    const causes: StatusCause[] = errs.map((e) => {
      const body = fieldErrorString({ ...e, field: '' });
      return { reason: e.type, message: body, field: e.field };
    });
    const d: StatusDetails = {};
    if (name) d.name = name;
    if (group) d.group = group;
    d.kind = kind;
    d.causes = causes;
    return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${list}`, d);
  },

  badRequest: (message: string): ApiError => new ApiError(400, 'BadRequest', message),

  unauthorized: (): ApiError => new ApiError(401, 'Unauthorized', 'Unauthorized'),

  /** RBAC denial in upstream's wording; `reason` is the authorizer's reason, if any. */
  forbidden: (
    t: Target & { subresource?: string; namespace?: string },
    username: string,
    verb: string,
    reason?: string,
  ): ApiError => {
    const subject = t.name ? `${gr(t)} "${t.name}"` : gr(t);
    const resource = t.subresource ? `${t.resource}/${t.subresource}` : t.resource;
    const scope = t.namespace ? `in the namespace "${t.namespace}"` : 'at the cluster scope';
    const suffix = reason ? `: ${reason}` : '';
    return new ApiError(
      403,
      'Forbidden',
      `${subject} is forbidden: User "${username}" cannot ${verb} resource "${resource}" in API group "${t.group}" ${scope}${suffix}`,
      details(t),
    );
  },

  forbiddenPath: (username: string, verb: string, path: string): ApiError =>
    new ApiError(403, 'Forbidden', `forbidden: User "${username}" cannot ${verb} path "${path}"`, {}),

  /** 403 from an admission check: `<gr> "<name>" is forbidden: <message>`. */
  admissionForbidden: (t: Target, message: string): ApiError =>
    new ApiError(403, 'Forbidden', `${gr(t)} "${t.name ?? ''}" is forbidden: ${message}`, details(t)),

  methodNotAllowed: (): ApiError =>
    new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}),

  verbNotSupported: (verb: string, t: Target): ApiError =>
    new ApiError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${gr(t)}"`, details(t)),

  notAcceptable: (accepted: string[]): ApiError =>
    new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`, {}),

  expired: (message: string): ApiError => new ApiError(410, 'Expired', message, {}),

  gone: (message: string): ApiError => new ApiError(410, 'Gone', message, {}),

  tooLarge: (message = `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}`): ApiError =>
    new ApiError(413, 'RequestEntityTooLarge', message, {}),

  unsupportedMediaType: (accepted: string[]): ApiError =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      {},
    ),

  tooManyRequests: (retryAfterSeconds: number): ApiError => {
    const e = new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', {
      retryAfterSeconds,
    });
    e.headers['Retry-After'] = String(retryAfterSeconds);
    return e;
  },

  internal: (err: unknown): ApiError => {
    const text = err instanceof Error ? err.message : String(err);
    return new ApiError(500, 'InternalError', `Internal error occurred: ${text}`, { causes: [{ message: text }] });
  },

  serviceUnavailable: (message: string, retryAfterSeconds: number): ApiError => {
    const e = new ApiError(503, 'ServiceUnavailable', message, { retryAfterSeconds });
    e.headers['Retry-After'] = String(retryAfterSeconds);
    return e;
  },

  timeout: (message: string, retryAfterSeconds?: number): ApiError =>
    new ApiError(504, 'Timeout', `Timeout: ${message}`, retryAfterSeconds ? { retryAfterSeconds } : {}),
};

/** Any thrown value as an ApiError: storage that cannot answer is 503 or 504, anything else internal. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreError && err.code === 'Unavailable') return errors.serviceUnavailable(`storage is unavailable: ${err.message}`, 1);
  if (err instanceof StoreError && err.code === 'Timeout') return errors.timeout(`storage did not answer in time: ${err.message}`, 1);
  return errors.internal(err);
}
