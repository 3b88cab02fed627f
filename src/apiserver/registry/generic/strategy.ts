/**
 * Per-resource behaviour, in the shape of kube-apiserver's registry strategies: the generic
 * request pipeline does everything common (decoding, metadata, concurrency, storage, watch),
 * and asks a resource's Strategy only what differs per kind.
 */
import type { KObject, UserInfo } from '../../../api/meta.js';
import type { ResourceInfo } from '../../../api/resources.js';
import type { Authorizer } from '../../authorization/authorizer.js';
import type { ObjectReader } from '../../authentication/types.js';
import type { FieldError } from '../../http/field-errors.js';

/** Everything a strategy may know about the request it serves. */
export interface RequestContext {
  user: UserInfo;
  now: Date;
  dryRun: boolean;
  authorizer: Authorizer;
  objects: ObjectReader;
  /** Texts to return as `Warning: 299 - "..."` headers. */
  warnings: string[];
  /** The object name in the request's URL (upstream's RequestInfo.Name): none on a POST to a collection. */
  requestName?: string;
  /** Adds an annotation to the request's audit events (upstream's audit.AddAuditAnnotation); absent when nothing is audited. */
  auditAnnotation?: (key: string, value: string) => void;
}

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  /** 0 = default columns; >0 only with `-o wide`. */
  priority: number;
}

export interface TableConvertor<T extends KObject = KObject> {
  columns: TableColumn[];
  /** One cell per column, in order. */
  cells(obj: T, now: Date): unknown[];
}

/** Update rules of one subresource (`status`, `approval`): which fields it may change. */
export interface SubresourceStrategy<T extends KObject = KObject> {
  /** Resets every field this subresource may not change from `old`. */
  prepareForUpdate(obj: T, old: T, ctx: RequestContext): void;
  validateUpdate(obj: T, old: T, ctx: RequestContext): FieldError[];
  /** Extra authorization beyond RBAC on the subresource (e.g. `approve` on signers); throws ApiError. */
  admit?(obj: T, old: T, ctx: RequestContext): Promise<void>;
}

/**
 * A resource whose create is computed rather than stored (TokenReview, SubjectAccessReview,
 * serviceaccounts/token): the handler decodes the body and returns what `create` gives.
 */
export interface VirtualCreate<T extends KObject = KObject> {
  /** `body` was decoded and type-checked as the resource's (or subresource's) kind, T. */
  create(body: T, ctx: RequestContext, target: { namespace?: string; name?: string }): Promise<KObject>;
  /**
   * `create` reads its body and never changes it: a body whose bytes were decoded before is handed
   * over as the same frozen object (handlers/decoded-bodies.ts), decoded once.
   */
  readsBodyOnly?: boolean;
}

/**
 * `T` is the kind's wire type (src/api). The registry hands a strategy only objects of its kind that
 * were decoded and type-checked against the kind's served schema (handlers/negotiation.ts), or read
 * back from storage, so a strategy reads their fields as typed, as upstream's strategies assert
 * `obj.(*api.Pod)`. The registries keep every strategy as a `Strategy` of KObject.
 */
export interface Strategy<T extends KObject = KObject> {
  readonly info: ResourceInfo;
  /**
   * Upstream's SetObjectDefaults_<Kind> (pkg/apis/<group>/v1/defaults.go): runs first on every
   * object a write decodes (create, update, patch result), before preparation and validation.
   */
  setDefaults?(obj: T): void;
  /** Sets or clears fields the caller does not control on create (status, requester identity). */
  prepareForCreate?(obj: T, ctx: RequestContext): void;
  /** Kind-specific validation on create; metadata is validated generically. */
  validate?(obj: T, ctx: RequestContext): FieldError[];
  /** Admission checks that answer 403 (or other ApiErrors) rather than 422; throws ApiError. */
  admit?(obj: T, old: T | undefined, ctx: RequestContext): Promise<void>;
  /** Resets fields an update of the main resource may not change (spec, status) from `old`. */
  prepareForUpdate?(obj: T, old: T, ctx: RequestContext): void;
  validateUpdate?(obj: T, old: T, ctx: RequestContext): FieldError[];
  /**
   * Whether an update leaving a deleting object without metadata.finalizers completes its deletion
   * (default yes); namespaces also wait for spec.finalizers (ShouldDeleteNamespaceDuringUpdate).
   */
  deleteDuringUpdate?(obj: T): boolean;
  /** PUT of a missing object creates it (Leases, Events do; most kinds do not). */
  allowCreateOnUpdate: boolean;
  /** PUT without metadata.resourceVersion is accepted (true for almost all kinds). */
  allowUnconditionalUpdate: boolean;
  /**
   * The group a 422 names the kind in, when it is not the served one: upstream names the internal
   * type's first group (events.k8s.io Events are the internal core Event: `Event "x" is invalid`).
   */
  invalidGroup?: string;
  /** Name validation for this kind; by default DNS-1123 subdomain (namespaces: label). */
  validateName?(name: string, prefix: boolean): string[];
  subresources?: Record<string, SubresourceStrategy<T>>;
  /** Field selectors beyond metadata.name and metadata.namespace. */
  fieldSelectors?: Record<string, (obj: KObject) => string | undefined>;
  table?: TableConvertor<T>;
  /** For kinds and subresources that are not stored (reviews, token requests). */
  virtual?: VirtualCreate<T>;
  virtualSubresources?: Record<string, VirtualCreate>;
}
