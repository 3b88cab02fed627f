/**
 * Node validation as upstream's (pkg/apis/core/validation): ValidateNodeUpdate, which the main
 * resource's and /status's updates both run, refuses an address listed twice in status.addresses
 * (same type and address) with a Duplicate field error; ValidateNode, on create, does not look at
 * them. An address sent without type or address is stored with empty strings, as Go decodes it.
 */
import { raw, type RawResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const NODES = '/api/v1/nodes';
const internal = (address: string) => ({ type: 'InternalIP', address });
const MERGE = 'application/merge-patch+json';

async function createNode(name: string, addresses: unknown[]): Promise<RawResponse['json']> {
  const c = await raw(s, 'POST', NODES, { body: { metadata: { name }, status: { addresses } } });
  expect(c.status).toBe(201);
  return c.json;
}

function expectDuplicate(res: RawResponse, name: string, index: number, value: string): void {
  expect(res.status).toBe(422);
  expect(res.json).toMatchObject({
    kind: 'Status',
    status: 'Failure',
    reason: 'Invalid',
    code: 422,
    details: { name, kind: 'Node', causes: [{ reason: 'FieldValueDuplicate', field: `status.addresses[${index}]`, message: `Duplicate value: ${value}` }] },
  });
  expect(res.json.message).toBe(`Node "${name}" is invalid: status.addresses[${index}]: Duplicate value: ${value}`);
}

describe('Node status.addresses', () => {
  it('refuses a duplicate address through /status (PUT and PATCH) and keeps the stored Node', async () => {
    const node = await createNode('dup-status', [internal('10.0.0.1'), { type: 'Hostname', address: 'dup-status' }]);
    const put = await raw(s, 'PUT', `${NODES}/dup-status/status`, {
      body: { ...node, status: { addresses: [internal('10.0.0.1'), { type: 'Hostname', address: 'dup-status' }, internal('10.0.0.1')] } },
    });
    expectDuplicate(put, 'dup-status', 2, 'core.NodeAddress{Type:"InternalIP", Address:"10.0.0.1"}');
    const patch = await raw(s, 'PATCH', `${NODES}/dup-status/status`, {
      body: { status: { addresses: [internal('10.0.0.2'), internal('10.0.0.2')] } },
      contentType: MERGE,
    });
    expectDuplicate(patch, 'dup-status', 1, 'core.NodeAddress{Type:"InternalIP", Address:"10.0.0.2"}');
    const stored = await raw(s, 'GET', `${NODES}/dup-status`);
    expect(stored.json.metadata.resourceVersion).toBe(node.metadata.resourceVersion);
    expect(stored.json.status.addresses).toEqual(node.status.addresses);
  });

  it('accepts one address under two types, and two addresses of one type', async () => {
    const node = await createNode('two-types', [internal('10.0.0.1')]);
    const addresses = [internal('10.0.0.1'), { type: 'ExternalIP', address: '10.0.0.1' }, internal('10.0.0.3')];
    const put = await raw(s, 'PUT', `${NODES}/two-types/status`, { body: { ...node, status: { addresses } } });
    expect(put.status).toBe(200);
    expect(put.json.status.addresses).toEqual(addresses);
  });

  it('creates a Node with duplicates, as ValidateNode does, but refuses its next update until they are gone', async () => {
    const node = await createNode('dup-create', [internal('10.0.0.1'), internal('10.0.0.1')]);
    expect(node.status.addresses).toEqual([internal('10.0.0.1'), internal('10.0.0.1')]);
    // An update of the main resource keeps the stored status, and ValidateNodeUpdate checks all of it.
    const label = await raw(s, 'PATCH', `${NODES}/dup-create`, { body: { metadata: { labels: { a: 'b' } } }, contentType: MERGE });
    expectDuplicate(label, 'dup-create', 1, 'core.NodeAddress{Type:"InternalIP", Address:"10.0.0.1"}');
    const put = await raw(s, 'PUT', `${NODES}/dup-create`, { body: { ...node, metadata: { ...node.metadata, labels: { a: 'b' } } } });
    expectDuplicate(put, 'dup-create', 1, 'core.NodeAddress{Type:"InternalIP", Address:"10.0.0.1"}');
    const fixed = await raw(s, 'PATCH', `${NODES}/dup-create/status`, { body: { status: { addresses: [internal('10.0.0.1')] } }, contentType: MERGE });
    expect(fixed.status).toBe(200);
    const relabel = await raw(s, 'PATCH', `${NODES}/dup-create`, { body: { metadata: { labels: { a: 'b' } } }, contentType: MERGE });
    expect(relabel.status).toBe(200);
    expect(relabel.json.metadata.labels).toEqual({ a: 'b' });
  });

  it('stores an address without type or address as empty strings, and two of them are duplicates', async () => {
    const node = await createNode('empty-entry', [{}]);
    expect(node.status.addresses).toEqual([{ type: '', address: '' }]);
    expect((await raw(s, 'GET', `${NODES}/empty-entry`)).json.status.addresses).toEqual([{ type: '', address: '' }]);
    const put = await raw(s, 'PUT', `${NODES}/empty-entry/status`, { body: { ...node, status: { addresses: [{ type: '' }, { address: '' }] } } });
    expectDuplicate(put, 'empty-entry', 1, 'core.NodeAddress{Type:"", Address:""}');
    const half = await raw(s, 'PUT', `${NODES}/empty-entry/status`, { body: { ...node, status: { addresses: [{ type: 'Hostname' }] } } });
    expect(half.status).toBe(200);
    expect(half.json.status.addresses).toEqual([{ type: 'Hostname', address: '' }]);
  });
});
