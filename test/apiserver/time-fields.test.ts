/**
 * metav1.Time and MicroTime fields through the server, as kube-apiserver's decoder treats them:
 * parsed on create, update and every patch type, written back in upstream's form (Time: UTC to the
 * second; MicroTime: six fractional digits; the zero time as null), and a malformed one refused
 * with the Go decoder's message (issue 20.3, fidelity issue 13.6).
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { timeFieldsOf } from '../../src/apiserver/codec/time-fields.js';
import { goTypeName, type Schema } from '../../src/apiserver/openapi/builder.js';
import { schemaFor } from '../../src/apiserver/openapi/schema-for.js';
import { goKindOf } from '../../src/apiserver/openapi/schema-walk.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const EVENTS = '/api/v1/namespaces/default/events';
const NEW_EVENTS = '/apis/events.k8s.io/v1/namespaces/default/events';

type Body = Record<string, unknown>;
const at = (obj: Body, path: string): unknown => path.split('.').reduce<unknown>((o, k) => (o as Body | undefined)?.[/^\d+$/.test(k) ? Number(k) : k] as unknown, obj);

/** [case, collection URL, object, { path: expected as stored and served }]. */
const accepted: [string, string, Body, Record<string, unknown>][] = [
  ['Lease MicroTimes with an offset become UTC with six digits', LEASES,
    { metadata: { name: 'l1' }, spec: { holderIdentity: 'a', acquireTime: '2026-11-24T04:30:00.123456+00:00', renewTime: '2026-11-24T06:30:28.654321+02:00' } },
    { 'spec.acquireTime': '2026-11-24T04:30:00.123456Z', 'spec.renewTime': '2026-11-24T04:30:28.654321Z' }],
  // LeaseSpec.renewTime is a *MicroTime with omitempty: null decodes to nil, which is omitted.
  ['a null MicroTime pointer is omitted', LEASES, { metadata: { name: 'l2' }, spec: { renewTime: null } }, { 'spec.renewTime': undefined }],
  ['core Event: Time to the second, MicroTime to the microsecond', EVENTS,
    {
      metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', message: 'm', type: 'Normal',
      firstTimestamp: '2026-11-24T04:30:00.999+01:00', lastTimestamp: '2026-11-24T05:30:00Z',
      eventTime: '2026-11-24T04:30:00.123456-00:30', series: { count: 2, lastObservedTime: '2026-11-24T04:31:00.000001Z' },
      reportingComponent: 'c', reportingInstance: 'i', action: 'A',
    },
    {
      firstTimestamp: '2026-11-24T03:30:00Z', lastTimestamp: '2026-11-24T05:30:00Z',
      eventTime: '2026-11-24T05:00:00.123456Z', 'series.lastObservedTime': '2026-11-24T04:31:00.000001Z',
    }],
  ['events.k8s.io Event: the zero time is null', NEW_EVENTS,
    {
      metadata: { name: 'e2' }, regarding: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', note: 'n', type: 'Normal',
      eventTime: '2026-11-24T04:30:00.500000+00:00', deprecatedFirstTimestamp: '0001-01-01T00:00:00Z',
      reportingController: 'example.com/c', reportingInstance: 'i', action: 'A',
    },
    { eventTime: '2026-11-24T04:30:00.500000Z', deprecatedFirstTimestamp: null }],
];

describe('time fields are parsed and written in upstream form', () => {
  it.each(accepted)('%s', async (_name, url, obj, expected) => {
    const created = await raw(s, 'POST', url, { body: obj });
    expect(created.status).toBe(201);
    const name = (obj.metadata as Body).name as string;
    const read = await raw(s, 'GET', `${url}/${name}`);
    for (const [path, value] of Object.entries(expected)) {
      expect([path, at(created.json, path)]).toEqual([path, value]);
      expect([path, at(read.json, path)]).toEqual([path, value]);
    }
  });

  it('normalizes on update and on every patch type', async () => {
    const url = `${LEASES}/l1`;
    const lease = (await raw(s, 'GET', url)).json;
    const put = await raw(s, 'PUT', url, { body: { ...lease, spec: { ...lease.spec, renewTime: '2026-11-24T04:40:00.100000+01:00' } } });
    expect(put.json.spec.renewTime).toBe('2026-11-24T03:40:00.100000Z');
    const patches: [string, unknown, string][] = [
      ['application/merge-patch+json', { spec: { renewTime: '2026-11-24T04:41:00.200000+01:00' } }, '2026-11-24T03:41:00.200000Z'],
      ['application/strategic-merge-patch+json', { spec: { renewTime: '2026-11-24T04:42:00.300000+01:00' } }, '2026-11-24T03:42:00.300000Z'],
      ['application/json-patch+json', [{ op: 'replace', path: '/spec/renewTime', value: '2026-11-24T04:43:00.400000+01:00' }], '2026-11-24T03:43:00.400000Z'],
      ['application/apply-patch+yaml', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: { renewTime: '2026-11-24T04:44:00.500000+01:00' } }, '2026-11-24T03:44:00.500000Z'],
    ];
    for (const [contentType, body, expected] of patches) {
      const q = contentType.startsWith('application/apply') ? '?fieldManager=test&force=true' : '';
      const r = await raw(s, 'PATCH', `${url}${q}`, { body: JSON.stringify(body), contentType });
      expect([contentType, r.status, r.json.spec?.renewTime]).toEqual([contentType, 200, expected]);
    }
  });

  it('normalizes CSR condition times on /approval', async () => {
    const csrs = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
    const { createCertificateRequestPem } = await import('../../src/pki/csr.js');
    const { generateKeyPair } = await import('../../src/pki/keys.js');
    const { privateKeyPem } = generateKeyPair('ECDSA-P256');
    const request = Buffer.from(await createCertificateRequestPem({ privateKeyPem, commonName: 'times' })).toString('base64');
    const csr = (await raw(s, 'POST', csrs, { body: { metadata: { name: 'times' }, spec: { request, signerName: 'example.com/t', usages: ['client auth'] } } })).json;
    const condition = { type: 'Approved', status: 'True', reason: 'R', lastUpdateTime: '2026-11-24T04:30:00.75-02:00', lastTransitionTime: '2026-11-24T04:30:00+00:00' };
    const r = await raw(s, 'PUT', `${csrs}/times/approval`, { body: { ...csr, status: { conditions: [condition] } } });
    expect(r.status).toBe(200);
    expect(r.json.status.conditions[0]).toMatchObject({ lastUpdateTime: '2026-11-24T06:30:00Z', lastTransitionTime: '2026-11-24T04:30:00Z' });
  });
});

const TIME = '2006-01-02T15:04:05Z07:00';
const MICRO = '2006-01-02T15:04:05.000000Z07:00';
/** [case, collection URL, object, Go decoder's message after `<Kind> in version "v1" cannot be handled as a <Kind>: `]. */
const refused: [string, string, Body, string][] = [
  ['a MicroTime without its six digits', LEASES, { metadata: { name: 'bad1' }, spec: { renewTime: '2026-11-24T04:30:28Z' } },
    `parsing time "2026-11-24T04:30:28Z" as "${MICRO}": cannot parse "Z" as ".000000"`],
  ['garbage in a MicroTime', LEASES, { metadata: { name: 'bad2' }, spec: { acquireTime: 'yesterday' } },
    `parsing time "yesterday" as "${MICRO}": cannot parse "yesterday" as "2006"`],
  ['a number where a time goes', LEASES, { metadata: { name: 'bad3' }, spec: { renewTime: 1732422628 } },
    'json: cannot unmarshal number into Go struct field LeaseSpec.spec.renewTime of type string'],
  ['a day out of range in metadata', LEASES, { metadata: { name: 'bad4', creationTimestamp: '2026-02-30T00:00:00Z' } },
    'parsing time "2026-02-30T00:00:00Z": day out of range'],
  ['a bad Event time', EVENTS, { metadata: { name: 'bad5' }, involvedObject: { name: 'p' }, firstTimestamp: '2026-11-24' },
    `parsing time "2026-11-24" as "${TIME}": cannot parse "" as "T"`],
  ['a bad managedFields time', LEASES, { metadata: { name: 'bad6', managedFields: [{ manager: 'm', operation: 'Update', time: '2026-11-24T04:30:28+0100' }] } },
    `parsing time "2026-11-24T04:30:28+0100" as "${TIME}": cannot parse "+0100" as "Z07:00"`],
];

describe('a malformed time is a 400 with the Go decoder\'s message, and nothing is stored', () => {
  it.each(refused)('%s', async (_name, url, obj, message) => {
    const before = s.store.currentRevision();
    const r: RawResponse = await raw(s, 'POST', url, { body: obj });
    const kind = url.includes('leases') ? 'Lease' : 'Event';
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: `${kind} in version "v1" cannot be handled as a ${kind}: ${message}` });
    expect(s.store.currentRevision()).toBe(before);
  });

  it('a patch that leaves a malformed time is upstream\'s invalid patch (422), and nothing changes', async () => {
    const before = (await raw(s, 'GET', `${LEASES}/l1`)).json;
    const r = await raw(s, 'PATCH', `${LEASES}/l1`, { body: JSON.stringify({ spec: { renewTime: 'soon' } }), contentType: 'application/merge-patch+json' });
    expect(r.status).toBe(422);
    expect(r.json.message).toMatch(/^ "" is invalid: patch: Invalid value: ".*": parsing time "soon" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "soon" as "2006"$/);
    expect((await raw(s, 'GET', `${LEASES}/l1`)).json).toEqual(before);
  });
});

describe('the time field table', () => {
  it.each([
    [{ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' }, ['spec.acquireTime', 'spec.renewTime']],
    [{ group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }, ['status.expirationTimestamp']],
    [{ group: '', version: 'v1', kind: 'Pod' }, ['status.startTime', 'status.containerStatuses[].state.terminated.finishedAt']],
    [{ group: '', version: 'v1', kind: 'Secret' }, ['metadata.creationTimestamp', 'metadata.deletionTimestamp', 'metadata.managedFields[].time']],
  ])('covers %o', (gvk, paths) => {
    expect(timeFieldsOf(gvk).map((f) => f[0])).toEqual(expect.arrayContaining(paths));
  });
});

describe('the time field table against the schemas', () => {
  const KINDS = [
    ['', 'v1', 'Namespace'],
    ['', 'v1', 'Pod'],
    ['', 'v1', 'Node'],
    ['', 'v1', 'Event'],
    ['events.k8s.io', 'v1', 'Event'],
    ['coordination.k8s.io', 'v1', 'Lease'],
    ['certificates.k8s.io', 'v1', 'CertificateSigningRequest'],
    ['authentication.k8s.io', 'v1', 'TokenRequest'],
  ].map(([group = '', version = '', kind = '']) => ({ group, version, kind }));

  /** Where the kind's schema puts a table path: the field's schema and the Go struct holding it, or 'free-form' above it. */
  function resolve(schema: Schema, path: string): { field: Schema; goStruct: string } | 'free-form' | undefined {
    let node: Schema | undefined = schema;
    let goStruct = '';
    for (const segment of path.split('.')) {
      goStruct = (goTypeName(node) ?? '').replace(/^.*\./, '');
      node = (node.properties as Record<string, Schema> | undefined)?.[segment.replace('[]', '')];
      if (!node) return undefined;
      if (goKindOf(node) === 'any') return 'free-form';
      if (segment.endsWith('[]')) {
        if (goKindOf(node) !== 'slice') return undefined;
        node = node.items as Schema;
      }
    }
    return { field: node, goStruct };
  }

  // The decode finds them by path, schema or not; a path the schema misplaces would go unchecked there.
  it.each(KINDS)('every time field of %o is a Time or MicroTime of the schema, in the Go struct the table names, or lies under a free-form part', (gvk) => {
    const schema = schemaFor(gvk.group, gvk.version, gvk.kind) as Schema;
    for (const [path, type, goStruct] of timeFieldsOf(gvk)) {
      const at = resolve(schema, path);
      if (at === 'free-form') continue;
      expect([path, at && goTypeName(at.field), at?.goStruct]).toEqual([path, `v1.${type}`, goStruct]);
    }
  });
});
