import { csrConditionCell, csrTable, humanDuration } from './table.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('humanDuration', () => {
  it.each([
    [-2 * S, '<invalid>'],
    [-1 * S, '0s'],
    [0, '0s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [5 * M + 7 * S, '5m7s'],
    [10 * M, '10m'],
    [60 * M, '60m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [7 * H + 30 * M, '7h30m'],
    [24 * H, '24h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [7 * D + 5 * H, '7d5h'],
    [365 * D, '365d'],
    [730 * D, '2y'],
    [3 * 365 * D + 4 * D, '3y4d'],
    [9 * 365 * D, '9y'],
  ])('%i ms -> %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

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
