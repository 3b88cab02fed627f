/**
 * kube-apiserver's audit flags (--audit-policy-file, --audit-log-*, --audit-webhook-*), with
 * upstream's names, units and defaults: the log writes synchronously (blocking) one event at a time
 * in batch mode, the webhook sends batches of up to 400 every 30 s, throttled to 10 per second.
 */
import { accessSync, constants } from 'node:fs';
import type { FieldSpec } from './schema.js';

const MODES = ['blocking', 'batch', 'blocking-strict'] as const;

/** The batch flags of one backend, `--audit-<plugin>-batch-*`. */
function batchFlags<P extends 'Log' | 'Webhook'>(plugin: P, d: { maxSize: number; maxWait: string; throttle: boolean; qps: number; burst: number }) {
  const name = plugin.toLowerCase();
  return {
    [`audit${plugin}BatchBufferSize`]: { type: 'int', default: 10_000, min: 1, description: `The size of the buffer to store events before batching and writing (${name}, batch mode).` },
    [`audit${plugin}BatchMaxSize`]: { type: 'int', default: d.maxSize, min: 1, description: `The maximum size of a batch (${name}, batch mode).` },
    [`audit${plugin}BatchMaxWait`]: { type: 'duration', default: d.maxWait, description: `The amount of time to wait before force writing the batch that hadn't reached the max size (${name}, batch mode).` },
    [`audit${plugin}BatchThrottleEnable`]: { type: 'bool', default: d.throttle, description: `Whether batching throttling is enabled (${name}, batch mode).` },
    [`audit${plugin}BatchThrottleQps`]: { type: 'number', default: d.qps, min: 0, description: `Maximum average number of batches per second (${name}, batch mode, throttling on).` },
    [`audit${plugin}BatchThrottleBurst`]: { type: 'int', default: d.burst, min: 0, description: `Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before (${name}, batch mode, throttling on).` },
  } as Record<`audit${P}Batch${'BufferSize' | 'MaxSize' | 'MaxWait' | 'ThrottleEnable' | 'ThrottleQps' | 'ThrottleBurst'}`, FieldSpec>;
}

/** The truncate flags of one backend, `--audit-<plugin>-truncate-*`, and its `--audit-<plugin>-version`. */
function truncateFlags<P extends 'Log' | 'Webhook'>(plugin: P) {
  const name = plugin.toLowerCase();
  return {
    [`audit${plugin}TruncateEnabled`]: { type: 'bool', default: false, description: `Whether event and batch truncating is enabled (${name}).` },
    [`audit${plugin}TruncateMaxBatchSize`]: {
      type: 'int',
      default: 10 * 1024 * 1024,
      min: 1,
      description: `Maximum size in bytes of the batch sent to the underlying backend (${name}); a larger batch is split into several.`,
    },
    [`audit${plugin}TruncateMaxEventSize`]: {
      type: 'int',
      default: 100 * 1024,
      min: 1,
      description: `Maximum size in bytes of an audit event sent to the underlying backend (${name}): a larger one loses its request and response objects, and is dropped if still too large.`,
    },
    [`audit${plugin}Version`]: { type: 'enum', default: 'audit.k8s.io/v1', values: ['audit.k8s.io/v1'], description: `API group and version used for serializing audit events (${name}).` },
  } as Record<`audit${P}${'TruncateEnabled' | 'TruncateMaxBatchSize' | 'TruncateMaxEventSize' | 'Version'}`, FieldSpec>;
}

export const AUDIT_CONFIG_SCHEMA = {
  auditPolicyFile: { type: 'string', default: '', description: 'Path to the audit.k8s.io/v1 Policy that decides what each request records. Without one nothing is audited.' },
  auditLogPath: { type: 'string', default: '', description: 'File the audit log is written to ("-" for stdout); empty disables the log backend.' },
  auditLogMaxage: { type: 'int', default: 0, min: 0, description: 'Maximum number of days to retain old audit log files, by the timestamp in their names (0 keeps them).' },
  auditLogMaxbackup: { type: 'int', default: 0, min: 0, description: 'Maximum number of old audit log files to retain (0 keeps them all).' },
  auditLogMaxsize: { type: 'int', default: 0, min: 0, description: 'Maximum size in megabytes of the audit log file before it gets rotated (0 means 100).' },
  auditLogCompress: { type: 'bool', default: false, description: 'Gzip rotated audit log files.' },
  auditLogFormat: { type: 'enum', default: 'json', values: ['json', 'legacy'], description: 'Format of the saved audits: json (one Event per line) or legacy (one line of text per event).' },
  auditLogMode: { type: 'enum', default: 'blocking', values: MODES, description: 'How events reach the log: blocking (in the request), batch (buffered, asynchronous) or blocking-strict (a failure at RequestReceived fails the request).' },
  ...batchFlags('Log', { maxSize: 1, maxWait: '0s', throttle: false, qps: 0, burst: 0 }),
  ...truncateFlags('Log'),
  auditWebhookConfigFile: { type: 'string', default: '', description: 'Path to a kubeconfig whose current context names the remote audit receiver and the credentials to reach it.' },
  auditWebhookMode: { type: 'enum', default: 'batch', values: MODES, description: 'How events reach the webhook: batch (buffered, asynchronous), blocking or blocking-strict.' },
  auditWebhookInitialBackoff: { type: 'duration', default: '10s', description: 'The amount of time to wait before retrying the first failed request (then ×1.5, five attempts in all).' },
  ...batchFlags('Webhook', { maxSize: 400, maxWait: '30s', throttle: true, qps: 10, burst: 15 }),
  ...truncateFlags('Webhook'),
} as const satisfies Record<string, FieldSpec>;

/** Files exist, and throttling has a rate. The policy itself is read and checked by the command. */
export function checkAuditOptions(c: Record<string, unknown>, problems: string[]): void {
  for (const key of ['auditPolicyFile', 'auditWebhookConfigFile'] as const) {
    const file = c[key];
    if (typeof file !== 'string' || file === '') continue;
    try {
      accessSync(file, constants.R_OK);
    } catch (err) {
      problems.push(`${key}: cannot read ${file}: ${(err as Error).message}`);
    }
  }
  for (const plugin of ['Log', 'Webhook'] as const) {
    if (c[`audit${plugin}BatchThrottleEnable`] !== true) continue;
    if (!((c[`audit${plugin}BatchThrottleQps`] as number) > 0)) problems.push(`audit${plugin}BatchThrottleQps: must be positive when throttling is enabled`);
    if (!((c[`audit${plugin}BatchThrottleBurst`] as number) > 0)) problems.push(`audit${plugin}BatchThrottleBurst: must be positive when throttling is enabled`);
  }
  for (const plugin of ['Log', 'Webhook'] as const) {
    const [batch, event] = [c[`audit${plugin}TruncateMaxBatchSize`] as number, c[`audit${plugin}TruncateMaxEventSize`] as number];
    if (batch < event) problems.push(`audit${plugin}TruncateMaxBatchSize: invalid audit truncate ${plugin.toLowerCase()} max batch size ${batch}, must be greater than max event size (${event})`);
  }
}
