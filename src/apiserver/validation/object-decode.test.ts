import { NestingTooDeep } from '../openapi/schema-walk.js';
import { normalizeTimeFields } from '../codec/time-fields.js';
import { MAX_NESTING_DEPTH } from './depth.js';
import { decodeWalk, removeUnknownFields } from './object-decode.js';

const POD = { group: '', version: 'v1', kind: 'Pod' };
const LEASE = { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' };
const BODY = { typed: true, unknownFields: true, dropNulls: true, maxDepth: MAX_NESTING_DEPTH };

describe('decodeWalk: one walk of a body', () => {
  it('counts every key, drops nulls, finds unknown fields and zeroes null list items, in one pass', () => {
    const pod: Record<string, unknown> = {
      metadata: { name: 'p', labels: null, bogus: { a: 1, b: null } },
      spec: { containers: [null, { name: 'c', image: 'i', colour: 'red', args: ['x', null] }], nodeName: null },
    };
    const found = decodeWalk(pod, POD, BODY);
    // metadata, name, labels, bogus, a, b, spec, containers, name, image, colour, args, nodeName.
    expect(found.keys).toBe(13);
    expect(found.unknownFields).toEqual(['metadata.bogus', 'spec.containers[1].colour']);
    expect(found.mismatches).toEqual([]);
    // Unknown fields stay until the decode is done with the object.
    expect(pod).toEqual({ metadata: { name: 'p', bogus: { a: 1 } }, spec: { containers: [{}, { name: 'c', image: 'i', colour: 'red', args: ['x', ''] }] } });
    removeUnknownFields(found);
    expect(pod).toEqual({ metadata: { name: 'p' }, spec: { containers: [{}, { name: 'c', image: 'i', args: ['x', ''] }] } });
  });

  it('reports mistyped fields in document order with the Go context the decoder names them by', () => {
    const found = decodeWalk({ spec: { containers: [{ name: 1, ports: [{ containerPort: '80' }] }], priority: 'high' }, metadata: [] }, POD, BODY);
    expect(found.mismatches.map(({ path, goStruct, goField, goType, value }) => [path, goStruct, goField, goType, value])).toEqual([
      ['.spec.containers[0].name', 'Container', 'spec.containers.name', 'string', 1],
      ['.spec.containers[0].ports[0].containerPort', 'ContainerPort', 'spec.containers.ports.containerPort', 'int32', '80'],
      ['.spec.priority', 'PodSpec', 'spec.priority', 'int32', 'high'],
      ['.metadata', 'Pod', 'metadata', 'v1.ObjectMeta', []],
    ]);
  });

  it('names fields that share a name with an Object.prototype member as unknown', () => {
    const obj = JSON.parse('{"metadata":{"name":"x","toString":"y","__proto__":{}},"constructor":1,"hasOwnProperty":{"a":1}}') as Record<string, unknown>;
    const found = decodeWalk(obj, LEASE, BODY);
    expect(found.unknownFields).toEqual(['metadata.toString', 'metadata.__proto__', 'constructor', 'hasOwnProperty']);
    removeUnknownFields(found);
    expect(JSON.stringify(obj)).toBe('{"metadata":{"name":"x"}}');
  });

  it('removes an unknown field whose name holds a dot or a bracket', () => {
    const obj: Record<string, unknown> = { metadata: { name: 'x', 'a.b': 1 }, 'c[0]': 2, spec: { 'd.e': { f: 1 } } };
    const found = decodeWalk(obj, LEASE, BODY);
    expect(found.unknownFields).toEqual(['metadata.a.b', 'c[0]', 'spec.d.e']);
    removeUnknownFields(found);
    expect(obj).toEqual({ metadata: { name: 'x' }, spec: {} });
  });

  it('finds time fields under free-form parts of the schema, and normalises them in the table\'s order', () => {
    const pod = {
      metadata: { name: 'p', creationTimestamp: '2026-11-24T06:30:28+02:00' },
      status: {
        startTime: '2026-11-24T04:30:28.5Z',
        containerStatuses: [{ name: 'c', state: { running: { startedAt: '2026-11-24T05:30:28+01:00' } }, lastState: { terminated: { finishedAt: 'later' } } }],
      },
    };
    const found = decodeWalk(pod, POD, BODY);
    expect(found.times.map((t) => t.mark.field[0])).toEqual([
      'metadata.creationTimestamp',
      'status.startTime',
      'status.containerStatuses[].state.running.startedAt',
      'status.containerStatuses[].lastState.terminated.finishedAt',
    ]);
    expect(() => normalizeTimeFields(found.times)).toThrow('parsing time "later" as "2006-01-02T15:04:05Z07:00": cannot parse "later" as "2006"');
    expect(pod.metadata.creationTimestamp).toBe('2026-11-24T04:30:28Z');
    expect(pod.status.containerStatuses[0]?.state.running.startedAt).toBe('2026-11-24T04:30:28Z');
  });

  it('caps nesting at the limit, counting the root as level one', () => {
    const nest = (levels: number): unknown => (levels === 1 ? [] : [nest(levels - 1)]);
    expect(() => decodeWalk({ metadata: { annotations: {} }, spec: nest(MAX_NESTING_DEPTH - 1) }, LEASE, BODY)).not.toThrow();
    expect(() => decodeWalk({ spec: nest(MAX_NESTING_DEPTH) }, LEASE, BODY)).toThrow(NestingTooDeep);
  });

  it('leaves a patch result\'s nulls, and a protobuf body\'s types and null items, alone', () => {
    const lease: Record<string, unknown> = { metadata: { name: 'l', labels: null }, spec: { holderIdentity: 1, bogus: 2 } };
    const patch = decodeWalk(lease, LEASE, { typed: true });
    expect(patch.mismatches.map((m) => m.path)).toEqual(['.spec.holderIdentity']);
    expect(patch.unknownFields).toEqual([]);
    expect(lease).toEqual({ metadata: { name: 'l', labels: null }, spec: { holderIdentity: 1, bogus: 2 } });
    const pod: Record<string, unknown> = { spec: { containers: [null], nodeName: 1 } };
    expect(decodeWalk(pod, POD, { typed: false, dropNulls: true }).mismatches).toEqual([]);
    expect(pod).toEqual({ spec: { containers: [null], nodeName: 1 } });
  });
});
