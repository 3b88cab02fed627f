/**
 * Server-side printing: meta.k8s.io Table responses built from a strategy's TableConvertor, or
 * upstream's default columns (Name, Created At) for kinds without a printer.
 */
import type { KObject, ListMeta } from '../../api/meta.js';
import { errors } from '../errors.js';
import type { Strategy, TableColumn, TableConvertor } from '../registry/generic/strategy.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function parseIncludeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject') ?? '';
  if (v === '' || v === 'Metadata') return 'Metadata';
  if (v === 'None' || v === 'Object') return v;
  throw errors.badRequest(`unrecognized includeObject value: ${JSON.stringify(v)}`);
}

export const NAME_COLUMN: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
};

const DEFAULT_TABLE: TableConvertor = {
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

export function partialObject(obj: KObject, metaVersion: string): KObject {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${metaVersion}`, metadata: obj.metadata ?? {} };
}

/** A Table of `objects`; `withColumns` false gives `columnDefinitions: null` (later watch events). */
export function tableOf(
  strategy: Strategy,
  objects: readonly KObject[],
  listMeta: ListMeta,
  include: IncludeObject,
  metaVersion: string,
  now: Date,
  withColumns: boolean,
): Record<string, unknown> {
  const conv = strategy.table ?? DEFAULT_TABLE;
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${metaVersion}`,
    metadata: listMeta,
    columnDefinitions: withColumns ? conv.columns : null,
    rows: objects.map((obj) => {
      const row: Record<string, unknown> = { cells: conv.cells(obj, now) };
      if (include === 'Metadata') row.object = partialObject(obj, metaVersion);
      else if (include === 'Object') row.object = obj;
      return row;
    }),
  };
}
