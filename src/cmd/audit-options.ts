/**
 * The audit flags as the server's AuditOptions: the policy read and checked now (a bad one stops
 * the start with exit code 2 and upstream's message), the backends only when their flags name them.
 */
import type { AuditOptions } from '../apiserver/audit/auditor.js';
import type { BatchConfig, Mode } from '../apiserver/audit/backend.js';
import type { LogFormat } from '../apiserver/audit/log.js';
import type { TruncateConfig } from '../apiserver/audit/truncate.js';
import type { Policy } from '../apiserver/audit/types.js';
import { loadPolicyFile, PolicyError } from '../apiserver/audit/policy.js';
import type { AUDIT_CONFIG_SCHEMA } from '../config/audit-schema.js';
import { ConfigError } from '../config/load.js';
import type { ConfigOf } from '../config/schema.js';

export type AuditConfig = ConfigOf<typeof AUDIT_CONFIG_SCHEMA>;

function batchConfig(c: AuditConfig, plugin: 'Log' | 'Webhook', asyncDelegate: boolean): BatchConfig {
  const batch: BatchConfig = {
    bufferSize: c[`audit${plugin}BatchBufferSize`],
    maxBatchSize: c[`audit${plugin}BatchMaxSize`],
    maxBatchWaitMs: c[`audit${plugin}BatchMaxWait`],
    asyncDelegate,
  };
  if (c[`audit${plugin}BatchThrottleEnable`]) batch.throttle = { qps: c[`audit${plugin}BatchThrottleQps`], burst: c[`audit${plugin}BatchThrottleBurst`] };
  return batch;
}

function truncateConfig(c: AuditConfig, plugin: 'Log' | 'Webhook'): TruncateConfig | undefined {
  if (!c[`audit${plugin}TruncateEnabled`]) return undefined;
  return { maxEventSize: c[`audit${plugin}TruncateMaxEventSize`], maxBatchSize: c[`audit${plugin}TruncateMaxBatchSize`] };
}

/**
 * Undefined when there is no policy (neither a file nor `fallback`, up's default), or when neither a
 * log nor a webhook would receive the events.
 */
export function auditOptions(c: AuditConfig, stdout: NodeJS.WritableStream, fallback?: Policy): AuditOptions | undefined {
  if ((!c.auditPolicyFile && !fallback) || (!c.auditLogPath && !c.auditWebhookConfigFile)) return undefined;
  let policy = fallback;
  try {
    if (c.auditPolicyFile) policy = loadPolicyFile(c.auditPolicyFile);
  } catch (err) {
    if (err instanceof PolicyError) throw new ConfigError([`auditPolicyFile: ${err.message}`]);
    throw err;
  }
  if (!policy) return undefined;
  const opts: AuditOptions = { policy, stdout };
  if (c.auditLogPath) {
    opts.log = {
      path: c.auditLogPath,
      maxAgeDays: c.auditLogMaxage,
      maxBackups: c.auditLogMaxbackup,
      maxSizeMb: c.auditLogMaxsize,
      compress: c.auditLogCompress,
      format: c.auditLogFormat as LogFormat,
      mode: c.auditLogMode as Mode,
      // Asynchronous log writes would only contend for the file, as upstream notes.
      batch: batchConfig(c, 'Log', false),
      truncate: truncateConfig(c, 'Log'),
    };
  }
  if (c.auditWebhookConfigFile) {
    opts.webhook = {
      configFile: c.auditWebhookConfigFile,
      mode: c.auditWebhookMode as Mode,
      batch: batchConfig(c, 'Webhook', true),
      initialBackoffMs: c.auditWebhookInitialBackoff,
      truncate: truncateConfig(c, 'Webhook'),
    };
  }
  return opts;
}
