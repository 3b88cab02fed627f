/**
 * The audit configuration as kube-apiserver's flags give it (--audit-policy-file, --audit-log-*,
 * --audit-webhook-*), turned into one Auditor: the policy checker, the backends in their modes,
 * and the metrics. With no policy there is no Auditor at all, and a request pays one check.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from '../../log/logger.js';
import { type Backend, type BatchConfig, BufferedBackend, type Mode, type Plugin, ignoringErrors, unionBackend } from './backend.js';
import { LogBackend, type LogFormat, openLogWriter } from './log.js';
import { AuditMetrics } from './metrics.js';
import { type TruncateConfig, TruncatingBackend } from './truncate.js';
import { type AuditAttributes, PolicyChecker, type RequestAuditConfig } from './policy.js';
import { type AuditSink, RequestAudit } from './request.js';
import type { AuditEvent, Policy } from './types.js';
import { WebhookBackend, webhookTarget } from './webhook.js';

export interface AuditLogOptions {
  /** A file, or `-` for stdout. */
  path: string;
  maxAgeDays: number;
  maxBackups: number;
  maxSizeMb: number;
  compress: boolean;
  format: LogFormat;
  mode: Mode;
  batch: BatchConfig;
  /** --audit-log-truncate-*, when enabled. */
  truncate?: TruncateConfig;
}

export interface AuditWebhookOptions {
  /** The kubeconfig naming the receiver. */
  configFile: string;
  mode: Mode;
  batch: BatchConfig;
  initialBackoffMs: number;
  /** --audit-webhook-truncate-*, when enabled. */
  truncate?: TruncateConfig;
}

export interface AuditOptions {
  policy: Policy;
  /** Where `--audit-log-path -` writes. */
  stdout: NodeJS.WritableStream;
  log?: AuditLogOptions;
  webhook?: AuditWebhookOptions;
}

export class Auditor implements AuditSink {
  private constructor(
    private readonly checker: PolicyChecker,
    private readonly backend: Backend,
    private readonly metrics: AuditMetrics,
  ) {}

  /** Opens the log file and reads the webhook's kubeconfig: a bad path or file stops the start. */
  static async create(opts: AuditOptions, registry: Registry, logger: Logger): Promise<Auditor> {
    const plugins: (Plugin | 'truncate')[] = [...(opts.log ? (['log'] as const) : []), ...(opts.webhook ? (['webhook'] as const) : [])];
    if (opts.log?.truncate || opts.webhook?.truncate) plugins.push('truncate');
    const metrics = new AuditMetrics(registry, plugins);
    const log = logger.child({ component: 'audit' });
    const backends: Backend[] = [];
    if (opts.log) {
      const l = opts.log;
      const writer = openLogWriter(l.path, { maxAgeDays: l.maxAgeDays, maxBackups: l.maxBackups, maxSizeMb: l.maxSizeMb, compress: l.compress }, opts.stdout);
      backends.push(inMode(new LogBackend(writer, l.format, metrics, log), 'log', l, { metrics, logger: log }));
    }
    if (opts.webhook) {
      const w = opts.webhook;
      const target = await webhookTarget(w.configFile);
      backends.push(inMode(new WebhookBackend(target, w.initialBackoffMs, metrics, log), 'webhook', w, { metrics, logger: log }));
    }
    return new Auditor(new PolicyChecker(opts.policy), unionBackend(backends), metrics);
  }

  /** A request arrived: its Audit-ID is set, its events are written as it goes. */
  begin(req: IncomingMessage, res: ServerResponse): RequestAudit {
    return new RequestAudit(this, req, res);
  }

  evaluate(attrs: AuditAttributes): RequestAuditConfig {
    const config = this.checker.evaluate(attrs);
    this.metrics.levels.inc({ level: config.level });
    return config;
  }

  process(event: AuditEvent): boolean | Promise<boolean> {
    this.metrics.events.inc();
    const ok = this.backend.processEvents([event]);
    // Only a RequestReceived event that a blocking-strict backend refused fails its request.
    if (event.stage !== 'RequestReceived') return ok;
    const counted = (accepted: boolean): boolean => {
      if (!accepted) this.metrics.rejected.inc();
      return accepted;
    };
    return typeof ok === 'boolean' ? counted(ok) : ok.then(counted);
  }

  /** Writes what the batches still hold (a hung webhook gets a few seconds) and closes the log. */
  close(): Promise<void> {
    return this.backend.close();
  }
}

/** The backend in its mode, with truncation around it (and around its batching) as upstream wraps them. */
function inMode(
  backend: Backend,
  plugin: Plugin,
  { mode, batch, truncate }: { mode: Mode; batch: BatchConfig; truncate?: TruncateConfig },
  to: { metrics: AuditMetrics; logger: Logger },
): Backend {
  let wrapped = backend;
  if (mode !== 'blocking-strict') wrapped = ignoringErrors(mode === 'batch' ? new BufferedBackend(backend, plugin, batch, to.metrics, to.logger) : backend);
  return truncate ? new TruncatingBackend(wrapped, truncate, to.metrics, to.logger) : wrapped;
}
