/** Column helpers for the built-in kinds' server-side printing. */
import type { TableColumn } from './strategy.js';

export { ageCell } from '../certificates/table.js';

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
