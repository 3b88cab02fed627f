import 'reflect-metadata';
import { jest } from '@jest/globals';
import fs, { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

  it("follows a Secret volume's swaps of its ..data link, and new files renamed into place, again and again", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-serving-files-'));
    const pairs = await Promise.all(['first', 'second', 'third', 'fourth'].map((cn) => selfSignedServingPair(cn, ['127.0.0.1'])));
    // What kubelet's atomic writer does: the files in a new timestamped directory, a new `..data` link
    // renamed over the old one, then the old directory removed. The names the server reads are links through `..data`.
    const publish = (n: number): void => {
      const ts = path.join(dir, `..ts${n}`);
      mkdirSync(ts);
      writeFileSync(path.join(ts, 'tls.crt'), pairs[n]!.certPem);
      writeFileSync(path.join(ts, 'tls.key'), pairs[n]!.keyPem);
      symlinkSync(`..ts${n}`, path.join(dir, '..data_tmp'));
      renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
      if (n > 0) rmSync(path.join(dir, `..ts${n - 1}`), { recursive: true });
    };
    publish(0);
    symlinkSync('..data/tls.crt', path.join(dir, 'tls.crt'));
    symlinkSync('..data/tls.key', path.join(dir, 'tls.key'));
    const changes: string[] = [];
    const errors: string[] = [];
    files = new ServingCertFiles({ certFile: path.join(dir, 'tls.crt'), keyFile: path.join(dir, 'tls.key'), onChange: (p) => changes.push(p.certPem), onError: (e) => errors.push(e.message) });
    expect(files.current().certPem).toBe(pairs[0]!.certPem);

    publish(1);
    await settle();
    expect(changes).toEqual([pairs[1]!.certPem]);
    publish(2);
    await settle();
    expect(changes).toEqual([pairs[1]!.certPem, pairs[2]!.certPem]);

    // An operator's rotation on plain files: each new file renamed over the old one, twice.
    const certFile = path.join(dir, 'plain.crt');
    const keyFile = path.join(dir, 'plain.key');
    files.stop();
    writeFileSync(certFile, pairs[0]!.certPem);
    writeFileSync(keyFile, pairs[0]!.keyPem);
    changes.length = 0;
    files = new ServingCertFiles({ certFile, keyFile, onChange: (p) => changes.push(p.certPem), onError: (e) => errors.push(e.message) });
    for (const n of [3, 1]) {
      writeFileSync(`${keyFile}.new`, pairs[n]!.keyPem);
      writeFileSync(`${certFile}.new`, pairs[n]!.certPem);
      renameSync(`${keyFile}.new`, keyFile);
      renameSync(`${certFile}.new`, certFile);
      await settle();
    }
    expect(changes).toEqual([pairs[3]!.certPem, pairs[1]!.certPem]);
    expect(files.current().certPem).toBe(pairs[1]!.certPem);
    // Between the two renames the files do not match: refused then, and only then.
    expect(errors.every((e) => e.includes('does not match the certificate'))).toBe(true);
  });
});
