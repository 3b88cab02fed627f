/**
 * Server-side printing: meta.k8s.io Table responses built from a strategy's TableConvertor (or
 * upstream's default one), with the request's includeObject.
 */
import type { KObject, ListMeta } from '../../api/meta.js';
import { errors } from '../http/errors.js';
import type { Strategy } from '../registry/generic/strategy.js';
import { DEFAULT_TABLE } from '../registry/generic/table.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function parseIncludeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject') ?? '';
  if (v === '' || v === 'Metadata') return 'Metadata';
  if (v === 'None' || v === 'Object') return v;
  throw errors.badRequest(`unrecognized includeObject value: ${JSON.stringify(v)}`);
}

export function partialObject(obj: KObject, metaVersion: string): KObject {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${metaVersion}`, metadata: obj.metadata ?? {} };
}

/** How a Table is rendered: what rows carry, the meta.k8s.io version, the time ages count from. */
export interface TableOptions {
  include: IncludeObject;
  metaVersion: string;
  now: Date;
  /** false gives `columnDefinitions: null` (watch events after the first). */
  withColumns: boolean;
}

/** A Table of `objects`. */
export function tableOf(
  strategy: Strategy,
  objects: readonly KObject[],
  listMeta: ListMeta,
  { include, metaVersion, now, withColumns }: TableOptions,
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
