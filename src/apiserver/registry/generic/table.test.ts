import { humanDuration } from './table.js';

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
