/** Reading an audit log the way an operator's pipeline does: one JSON Event per line. */
import { existsSync, readFileSync } from 'node:fs';
import type { AuditLogOptions, AuditOptions } from '../../src/apiserver/audit/auditor.js';
import { loadPolicyFile } from '../../src/apiserver/audit/policy.js';
import type { AuditEvent } from '../../src/apiserver/audit/types.js';

export function readEvents(file: string): AuditEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** The events of `file` once `pred` holds for them (the last event of a request is written after its response). */
export async function eventsWhen(file: string, pred: (evs: AuditEvent[]) => boolean, ms = 10_000): Promise<AuditEvent[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const evs = readEvents(file);
    if (pred(evs)) return evs;
    if (Date.now() > deadline) throw new Error(`audit log ${file} never matched; it holds:\n${evs.map((e) => JSON.stringify(e)).join('\n')}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Events of one request, by its Audit-ID. */
export const byId = (evs: AuditEvent[], id: string | string[] | undefined): AuditEvent[] => evs.filter((e) => e.auditID === id);

/** Audit options as the flags' defaults give them, with a log file. */
export function logAudit(policyFile: string, path: string, log: Partial<AuditLogOptions> = {}): AuditOptions {
  return {
    policy: loadPolicyFile(policyFile),
    stdout: process.stdout,
    log: {
      path,
      maxAgeDays: 0,
      maxBackups: 0,
      maxSizeMb: 0,
      compress: false,
      format: 'json',
      mode: 'blocking',
      batch: { bufferSize: 10_000, maxBatchSize: 1, maxBatchWaitMs: 0, asyncDelegate: false },
      ...log,
    },
  };
}
