/** core/v1 and events.k8s.io/v1 Events: free-form records, created on update as upstream allows. */
import type { KObject } from '../../api/meta.js';
import { findResource } from '../../api/resources.js';
import type { Strategy } from './strategy.js';
import { ageCell, column } from './table-columns.js';

const coreInfo = findResource('', 'v1', 'events');
const eventsInfo = findResource('events.k8s.io', 'v1', 'events');
if (!coreInfo || !eventsInfo) throw new Error('events missing from RESOURCES');

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function lastSeen(obj: KObject, now: Date): string {
  const t = str(obj.lastTimestamp) || str(obj.eventTime) || str(obj.firstTimestamp) || obj.metadata?.creationTimestamp;
  return ageCell(t, now);
}

export const coreEventStrategy: Strategy = {
  info: coreInfo,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  table: {
    columns: [
      column('Last Seen', 'string', 'The last time the event occurred'),
      column('Type', 'string', 'Type of this event (Normal, Warning)'),
      column('Reason', 'string', 'Why the action was taken'),
      column('Object', 'string', 'The object this Event is about'),
      column('Message', 'string', 'A human-readable description of the status of this operation'),
    ],
    cells: (obj, now) => {
      const io = rec(obj.involvedObject);
      return [lastSeen(obj, now), str(obj.type), str(obj.reason), `${str(io.kind).toLowerCase()}/${str(io.name)}`, str(obj.message)];
    },
  },
};

export const eventsV1Strategy: Strategy = {
  info: eventsInfo,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
};
