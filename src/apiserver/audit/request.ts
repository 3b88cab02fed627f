/**
 * One request's audit trail (upstream's AuditContext): created when the request arrives, given the
 * level once the caller is known, filled by the pipeline and handlers (authorization decision,
 * request and response objects) and emitted at each stage. Each emitted Event is a snapshot that
 * later changes to the request never touch.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { UserInfo } from '../../api/meta.js';
import type { ApiError } from '../http/errors.js';
import type { RequestInfo } from '../http/request-info.js';
import { peerOf } from '../http/connection.js';
import { plainExtra } from '../authentication/request-authenticator.js';
import type { AuditAttributes, RequestAuditConfig } from './policy.js';
import { AUDIT_API_VERSION, levelAtLeast, type AuditEvent, type ObjectReference, type ResponseStatus, type Stage } from './types.js';

export const AUDIT_ID_HEADER = 'Audit-ID';

/** Where a request's events go; the Auditor implements it. */
export interface AuditSink {
  evaluate(attrs: AuditAttributes): RequestAuditConfig;
  /** False when a blocking-strict backend failed; a promise when a backend blocks on the network. */
  process(event: AuditEvent): boolean | Promise<boolean>;
}

/**
 * metav1.MicroTime of now: six fractional digits, from the high-resolution clock. The milliseconds
 * come from toISOString and the microseconds are appended: twice a request, a general formatter
 * cost more than the rest of the event.
 */
function microNow(): string {
  const ms = performance.timeOrigin + performance.now();
  const whole = Math.floor(ms);
  const micros = Math.floor((ms - whole) * 1000);
  return `${new Date(whole).toISOString().slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}

/** Go prints an IPv4-mapped IPv6 address as the IPv4 one. */
const plainIp = (ip: string): string => (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

/** upstream's SourceIPs: X-Forwarded-For's valid entries, X-Real-Ip unless already there, then the peer. */
function sourceIPs(req: IncomingMessage): string[] {
  const ips: string[] = [];
  const header = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  for (const part of (header('x-forwarded-for') ?? '').split(',')) {
    const ip = part.trim();
    if (isIP(ip)) ips.push(plainIp(ip));
  }
  const real = header('x-real-ip')?.trim();
  if (real && isIP(real) && !ips.includes(plainIp(real))) ips.push(plainIp(real));
  const remote = peerOf(req).remoteAddress;
  if (remote && ips.at(-1) !== plainIp(remote)) ips.push(plainIp(remote));
  return ips;
}

function userOf(u: UserInfo): UserInfo {
  const out: UserInfo = { username: u.username, groups: [...u.groups] };
  if (u.uid) out.uid = u.uid;
  // Copied: a shared user's extra is frozen, which JSON.stringify serializes off its fast path.
  if (u.extra && Object.keys(u.extra).length > 0) out.extra = plainExtra(u.extra);
  return out;
}

/** upstream's message for a failed authentication: which credentials were tried. */
function attemptedMethods(req: IncomingMessage, hadCertificate: boolean): string {
  const methods: string[] = [];
  const auth = (req.headers.authorization ?? '').trim();
  if (/^basic\s/i.test(auth)) methods.push('basic');
  if (/^bearer\s+\S/i.test(auth)) methods.push('bearer');
  if (hadCertificate) methods.push('x509');
  return methods.length > 0 ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided';
}

/** Drops metadata.managedFields from an object or from each item of a list, without touching the original. */
function withoutManagedFields(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const v = value as { metadata?: { managedFields?: unknown }; items?: unknown[] };
  let out: Record<string, unknown> = v as Record<string, unknown>;
  if (v.metadata && typeof v.metadata === 'object' && 'managedFields' in v.metadata) {
    const { managedFields: _dropped, ...metadata } = v.metadata;
    out = { ...out, metadata };
  }
  if (Array.isArray(v.items)) out = { ...out, items: v.items.map(withoutManagedFields) };
  return out;
}

export class RequestAudit {
  readonly auditID: string;
  private readonly received = microNow();
  private config?: RequestAuditConfig;
  private event?: Omit<AuditEvent, 'stage' | 'stageTimestamp'>;
  private annotations?: Record<string, string>;
  private responseStarted = false;
  /** The last event went out (ResponseComplete, Panic, or a failed authentication's). */
  private finished = false;

  constructor(
    private readonly sink: AuditSink,
    private readonly req: IncomingMessage,
    res: ServerResponse,
  ) {
    const incoming = req.headers['audit-id'];
    this.auditID = typeof incoming === 'string' && incoming !== '' ? incoming : randomUUID();
    res.setHeader(AUDIT_ID_HEADER, this.auditID);
  }

  /**
   * The caller is known: the policy gives the level and, unless None, RequestReceived is emitted.
   * Whether it was stored, at once unless a backend blocks on the network.
   */
  authenticated(info: RequestInfo, user: UserInfo, impersonated?: UserInfo): boolean | Promise<boolean> {
    if (!this.start(info, user)) return true;
    if (this.event) {
      this.event.user = userOf(user);
      if (impersonated) this.event.impersonatedUser = userOf(impersonated);
    }
    return this.emit('RequestReceived');
  }

  /** A 401: one event with the failure, as upstream's failed-authentication audit writes it. */
  async authenticationFailed(info: RequestInfo, hadCertificate: boolean): Promise<void> {
    if (!this.start(info, undefined) || !this.event) return;
    this.event.responseStatus = { metadata: {}, message: attemptedMethods(this.req, hadCertificate), code: 401 };
    this.responseStarted = this.finished = true;
    await this.emit('ResponseStarted');
  }

  private start(info: RequestInfo, user: UserInfo | undefined): boolean {
    const attrs: AuditAttributes = { ...info, user };
    this.config = this.sink.evaluate(attrs);
    if (this.config.level === 'None') return false;
    const event: Omit<AuditEvent, 'stage' | 'stageTimestamp'> = {
      kind: 'Event',
      apiVersion: AUDIT_API_VERSION,
      level: this.config.level,
      auditID: this.auditID,
      requestURI: this.req.url ?? '/',
      verb: info.verb,
      user: {},
      sourceIPs: sourceIPs(this.req),
      requestReceivedTimestamp: this.received,
    };
    const ua = this.req.headers['user-agent'];
    if (ua) event.userAgent = ua;
    if (info.isResourceRequest) {
      const ref: ObjectReference = { resource: info.resource };
      if (info.namespace) ref.namespace = info.namespace;
      if (info.name) ref.name = info.name;
      if (info.apiGroup) ref.apiGroup = info.apiGroup;
      ref.apiVersion = info.apiVersion;
      if (info.subresource) ref.subresource = info.subresource;
      event.objectRef = ref;
    }
    this.event = event;
    return true;
  }

  authorized(allowed: boolean, reason: string | undefined): void {
    if (!this.event) return;
    this.annotations = { ...this.annotations, 'authorization.k8s.io/decision': allowed ? 'allow' : 'forbid', 'authorization.k8s.io/reason': reason ?? '' };
  }

  /** An annotation from the handler (the credential a TokenRequest issued), on the events still to come. */
  annotate(key: string, value: string): void {
    if (this.event) this.annotations = { ...this.annotations, [key]: value };
  }

  /** The decoded body of a create or update (or DeleteOptions): completes objectRef, kept at Request and above. */
  requestObject(obj: unknown): void {
    const ev = this.event;
    if (!ev || !this.config) return;
    if (ev.objectRef) completeRef(ev.objectRef, obj);
    if (!levelAtLeast(this.config.level, 'Request')) return;
    const copy = structuredClone(obj);
    ev.requestObject = this.config.omitManagedFields ? withoutManagedFields(copy) : copy;
  }

  /** A patch body is recorded as sent. */
  requestPatch(body: Buffer): void {
    if (!this.event || !this.config || !levelAtLeast(this.config.level, 'Request')) return;
    const text = body.toString('utf8');
    try {
      this.event.requestObject = JSON.parse(text);
    } catch {
      this.event.requestObject = text;
    }
  }

  /** What the handler answered: a Status becomes responseStatus; the object itself is kept at RequestResponse. */
  responseObject(value: unknown): void {
    const ev = this.event;
    if (!ev || !this.config) return;
    const status = value as { kind?: unknown } | null;
    if (status?.kind === 'Status') ev.responseStatus = statusOf(value as ResponseStatus);
    if (levelAtLeast(this.config.level, 'RequestResponse')) ev.responseObject = this.config.omitManagedFields ? withoutManagedFields(value) : value;
  }

  /** A long-running request (watch) wrote its headers. */
  async started(code: number): Promise<void> {
    if (!this.event || this.responseStarted) return;
    this.responseStarted = true;
    this.event.responseStatus ??= { metadata: {}, code };
    await this.emit('ResponseStarted');
  }

  /** The response is complete (status from the response when no Status object said more). */
  async completed(code: number): Promise<void> {
    if (!this.event || this.finished) return;
    this.event.responseStatus ??= { metadata: {}, code };
    await this.emit('ResponseComplete');
  }

  /** An ApiError answered the request. */
  async failed(err: ApiError): Promise<void> {
    if (!this.event || this.finished) return;
    this.event.responseStatus = statusOf(err.toStatus());
    await this.emit('ResponseComplete');
  }

  /** An unexpected exception: upstream's Panic stage. */
  async panicked(err: unknown): Promise<void> {
    if (!this.event || this.finished) return;
    const message = `APIServer panic'd: ${err instanceof Error ? err.message : String(err)}`;
    this.event.responseStatus = { metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 };
    await this.emit('Panic');
  }

  private emit(stage: Stage): boolean | Promise<boolean> {
    const ev = this.event;
    if (stage === 'ResponseComplete' || stage === 'Panic') this.finished = true;
    if (!ev || this.config?.omitStages.includes(stage)) return true;
    // Upstream's field order; absent fields stay out of the JSON, as Go's omitempty leaves them.
    const snapshot = {
      kind: ev.kind,
      apiVersion: ev.apiVersion,
      level: ev.level,
      auditID: ev.auditID,
      stage,
      requestURI: ev.requestURI,
      verb: ev.verb,
      user: ev.user,
    } as AuditEvent;
    if (ev.impersonatedUser) snapshot.impersonatedUser = ev.impersonatedUser;
    if (ev.sourceIPs) snapshot.sourceIPs = ev.sourceIPs;
    if (ev.userAgent !== undefined) snapshot.userAgent = ev.userAgent;
    if (ev.objectRef) snapshot.objectRef = { ...ev.objectRef };
    if (ev.responseStatus) snapshot.responseStatus = { ...ev.responseStatus };
    if (ev.requestObject !== undefined) snapshot.requestObject = ev.requestObject;
    if (ev.responseObject !== undefined) snapshot.responseObject = ev.responseObject;
    snapshot.requestReceivedTimestamp = ev.requestReceivedTimestamp;
    snapshot.stageTimestamp = stage === 'RequestReceived' ? this.received : microNow();
    if (this.annotations) snapshot.annotations = { ...this.annotations };
    return this.sink.process(snapshot);
  }
}

/** What the URL did not say (a created object's name, its uid and version) from the object's metadata. */
function completeRef(ref: ObjectReference, obj: unknown): void {
  const meta = (obj as { metadata?: Record<string, unknown> } | null)?.metadata;
  if (!meta || typeof meta !== 'object') return;
  for (const key of ['namespace', 'name', 'uid', 'resourceVersion'] as const) {
    const v = meta[key];
    if (!ref[key] && typeof v === 'string' && v !== '') ref[key] = v;
  }
}

/** A Status as the audit event carries it: empty metadata, empty fields left out. */
function statusOf(s: Omit<ResponseStatus, 'metadata'>): ResponseStatus {
  const out: ResponseStatus = { metadata: {}, code: s.code };
  if (s.status) out.status = s.status;
  if (s.message) out.message = s.message;
  if (s.reason) out.reason = s.reason;
  if (s.details) out.details = s.details;
  return out;
}
