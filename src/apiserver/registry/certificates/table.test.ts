import { csrConditionCell, csrTable } from './table.js';

describe('csrTable', () => {
  const now = new Date('2024-05-01T12:00:00Z');
  const csr = (status: unknown, spec: Record<string, unknown> = {}) => ({
    metadata: { name: 'n1', creationTimestamp: '2024-05-01T11:00:00Z' },
    spec: { signerName: 'example.com/s', username: 'alice', ...spec },
    status,
  });

  it('has upstream columns in order', () => {
    expect(csrTable.columns.map((c) => c.name)).toEqual(['Name', 'Age', 'SignerName', 'Requestor', 'RequestedDuration', 'Condition']);
    expect(csrTable.columns.every((c) => c.type === 'string' && c.priority === 0)).toBe(true);
    expect(csrTable.columns[0]?.format).toBe('name');
  });

  it('prints cells', () => {
    expect(csrTable.cells(csr({}, { expirationSeconds: 3600 }), now)).toEqual(['n1', '60m', 'example.com/s', 'alice', '60m', 'Pending']);
    expect(csrTable.cells({ metadata: { name: 'x' }, spec: {} }, now)).toEqual(['x', '<unknown>', '<none>', '', '<none>', 'Pending']);
  });

  it.each([
    [{ conditions: [{ type: 'Approved', status: 'True' }], certificate: 'AQ==' }, 'Approved,Issued'],
    [{ conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True' }] }, 'Approved,Failed'],
    [{ conditions: [{ type: 'Approved', status: 'True' }, { type: 'Denied', status: 'True' }] }, 'Denied'],
    [{ conditions: [{ type: 'Custom', status: 'True' }] }, 'Pending'],
    [{ conditions: [{ type: 'Failed', status: 'True' }], certificate: 'AQ==' }, 'Pending,Failed,Issued'],
  ])('condition cell for %j is %s', (status, text) => {
    expect(csrConditionCell(csr(status))).toBe(text);
  });
});
