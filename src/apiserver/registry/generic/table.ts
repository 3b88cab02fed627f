/**
 * Server-side printing helpers shared by every kind's TableConvertor: column definitions, upstream's
 * default columns, and apimachinery's HumanDuration for ages.
 */
import type { TableColumn, TableConvertor } from './strategy.js';

export function column(
  name: string,
  type: TableColumn['type'],
  description: string,
  priority = 0,
  format = '',
): TableColumn {
  return { name, type, format, description, priority };
}

export const AGE_COLUMN = column(
  'Age',
  'string',
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.',
);

export const NAME_COLUMN = column(
  'Name',
  'string',
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  0,
  'name',
);

/** Upstream's default printer (Name, Created At) for kinds without one of their own. */
export const DEFAULT_TABLE: TableConvertor = {
  columns: [
    NAME_COLUMN,
    {
      name: 'Created At',
      type: 'date',
      format: '',
      description:
        'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
      priority: 0,
    },
  ],
  cells: (obj) => [obj.metadata?.name ?? '', obj.metadata?.creationTimestamp ?? ''],
};

/** apimachinery's duration.HumanDuration: coarser units as durations grow. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/** Age cell: `<unknown>` without a creationTimestamp. */
export function ageCell(creationTimestamp: string | null | undefined, now: Date): string {
  const t = creationTimestamp ? Date.parse(creationTimestamp) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now.getTime() - t);
}
