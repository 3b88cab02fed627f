import { ApiError } from '../http/errors.js';
import { negotiateOutput } from './negotiation.js';

const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';
const PARTIAL = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1';

describe('negotiateOutput, remembered per Accept value', () => {
  it('answers a repeated Accept exactly as the first time, for each pretty and Table setting', () => {
    for (let round = 0; round < 2; round++) {
      expect(negotiateOutput(undefined, false, false)).toEqual({ kind: 'json', metaVersion: 'v1', pretty: false });
      expect(negotiateOutput('application/json', true, false)).toEqual({ kind: 'json', metaVersion: 'v1', pretty: true });
      expect(negotiateOutput('application/json', false, false)).toEqual({ kind: 'json', metaVersion: 'v1', pretty: false });
      expect(negotiateOutput(`${TABLE}, application/json`, false, true)).toEqual({ kind: 'table', metaVersion: 'v1', pretty: false });
      // The same header where a Table is not served (a create's response): the next range.
      expect(negotiateOutput(`${TABLE}, application/json`, false, false)).toEqual({ kind: 'json', metaVersion: 'v1', pretty: false });
      expect(negotiateOutput(PARTIAL, false, false)).toEqual({ kind: 'partial', metaVersion: 'v1beta1', pretty: false });
      expect(negotiateOutput('application/yaml', false, true)).toEqual({ kind: 'yaml', metaVersion: 'v1', pretty: false });
      expect(() => negotiateOutput(TABLE, false, false)).toThrow(ApiError);
      expect(() => negotiateOutput('application/vnd.kubernetes.protobuf', false, false)).toThrow(expect.objectContaining({ code: 406 }) as Error);
    }
  });

  it('hands out answers no caller can change for the next', () => {
    const out = negotiateOutput('application/json;q=0.9', false, false);
    expect(Object.isFrozen(out)).toBe(true);
    expect(negotiateOutput('application/json;q=0.9', false, false)).toBe(out);
  });

  it('stays right past its bound of remembered values', () => {
    for (let i = 0; i < 600; i++) expect(negotiateOutput(`application/json;x=${i}`, i % 2 === 0, false)).toEqual({ kind: 'json', metaVersion: 'v1', pretty: i % 2 === 0 });
    expect(negotiateOutput(`${TABLE}`, false, true).kind).toBe('table');
  });
});
