import 'reflect-metadata';
import { jest } from '@jest/globals';
import fs, { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServingCertFiles } from './serving-cert-files.js';
import { selfSignedServingPair } from './self-signed.js';

const settle = (ms = 400): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('ServingCertFiles in a directory other files are written to (up keeps its store and audit log beside the pair)', () => {
  let dir: string;
  let files: ServingCertFiles | undefined;
  afterEach(() => {
    files?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ignores the other files, reports a broken pair, and takes a new good one', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-serving-files-'));
    const certFile = path.join(dir, 'apiserver.crt');
    const keyFile = path.join(dir, 'apiserver.key');
    const first = await selfSignedServingPair('first', ['127.0.0.1']);
    const second = await selfSignedServingPair('second', ['127.0.0.1']);
    writeFileSync(certFile, first.certPem);
    writeFileSync(keyFile, first.keyPem);
    const changes: string[] = [];
    const errors: string[] = [];
    files = new ServingCertFiles({ certFile, keyFile, onChange: (p) => changes.push(p.certPem), onError: (e) => errors.push(e.message) });

    // Other files' writes are not even read for: nothing but the pair's own names wakes the watcher.
    const reads = jest.spyOn(fs, 'readFileSync');
    try {
      for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, 'state.db-wal'), `write ${i}`);
      await settle();
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
    expect([changes, errors]).toEqual([[], []]);

    // A certificate whose key is not in the key file is refused, and the pair in use stays.
    writeFileSync(certFile, second.certPem);
    await settle();
    expect(changes).toEqual([]);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e.includes('does not match the certificate'))).toBe(true);
    expect(files.current().certPem).toBe(first.certPem);

    writeFileSync(keyFile, second.keyPem);
    await settle();
    expect(changes).toEqual([second.certPem]);
    expect(files.current()).toEqual(second);
  });
});
