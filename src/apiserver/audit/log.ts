/**
 * The log backend (--audit-log-*): one event a line, as JSON (`json`, the default) or in the
 * `legacy` one-line text, to a rotating file or to stdout for `-`.
 */
import type { Logger } from '../../log/logger.js';
import { type Backend, pluginError } from './backend.js';
import type { AuditMetrics } from './metrics.js';
import { RotatingFile, type RotatingFileOptions } from './rotate.js';
import type { AuditEvent } from './types.js';

export const LOG_FORMATS = ['json', 'legacy'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Where lines go: a rotating file, or a stream such as stdout. */
export interface LineWriter {
  write(data: Buffer): void;
  close(): void;
}

const quoted = (list: readonly string[]): string => list.map((s) => JSON.stringify(s)).join(',');

/** upstream's EventString: the request in one line of key="value" pairs. */
export function legacyLine(ev: AuditEvent): string {
  const username = ev.user.username || '<none>';
  const groups = ev.user.username && ev.user.groups?.length ? quoted(ev.user.groups) : '<none>';
  const as = ev.impersonatedUser?.username ?? '<self>';
  const asGroups = ev.impersonatedUser ? quoted(ev.impersonatedUser.groups) : '<lookup>';
  const fields: [string, string][] = [
    ['id', ev.auditID],
    ['stage', ev.stage],
    ['ip', ev.sourceIPs?.[0] ?? '<unknown>'],
    ['method', ev.verb],
    ['user', username],
    ['groups', groups],
    ['as', as],
    ['asgroups', asGroups],
    ['user-agent', ev.userAgent ?? ''],
    ['namespace', ev.objectRef?.namespace || '<none>'],
    ['uri', ev.requestURI],
  ];
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  return `${ev.requestReceivedTimestamp} AUDIT: ${fields.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')} response="${response}"`;
}

export class LogBackend implements Backend {
  constructor(
    private readonly writer: LineWriter,
    private readonly format: LogFormat,
    private readonly metrics: AuditMetrics,
    private readonly logger: Logger,
  ) {}

  processEvents(events: AuditEvent[]): boolean {
    const lines = events.map((ev) => `${this.format === 'legacy' ? legacyLine(ev) : JSON.stringify(ev)}\n`);
    try {
      // One write per event: a rotation can fall between two, never inside one.
      for (const line of lines) this.writer.write(Buffer.from(line));
      return true;
    } catch (err) {
      pluginError(this.metrics, this.logger, 'log', err, events.length);
      return false;
    }
  }

  async close(): Promise<void> {
    this.writer.close();
  }
}

/** `-` is stdout (kept open); anything else a file created now, so a bad path stops the start. */
export function openLogWriter(path: string, rotation: Omit<RotatingFileOptions, 'filename'>, stdout: NodeJS.WritableStream): LineWriter {
  if (path === '-') return { write: (data) => void stdout.write(data), close: () => undefined };
  const file = new RotatingFile({ ...rotation, filename: path });
  file.open();
  return file;
}
