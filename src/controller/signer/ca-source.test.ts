import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCertificateAuthority, type CaMaterial } from '../../pki/ca.js';
import { PkiError } from '../../pki/errors.js';
import { CaSource } from './ca-source.js';

describe('CaSource', () => {
  let dir: string;
  let files: { certFile: string; keyFile: string };
  let first: CaMaterial;
  let second: CaMaterial;
  const write = (ca: CaMaterial): void => {
    writeFileSync(files.certFile, ca.certPem);
    writeFileSync(files.keyFile, ca.keyPem);
  };

  beforeAll(async () => {
    first = await createCertificateAuthority({ commonName: 'ca-one' });
    second = await createCertificateAuthority({ commonName: 'ca-two' });
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ca-source-'));
    files = { certFile: path.join(dir, 'ca.crt'), keyFile: path.join(dir, 'ca.key') };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('throws a PkiError while the files are missing, and loads them once they appear', () => {
    let now = 1_000_000;
    const source = new CaSource(files, undefined, () => now);
    expect(() => source.signer()).toThrow(PkiError);
    write(first);
    now += 1;
    expect(source.signer().certPem).toBe(first.certPem);
  });

  it('looks at the files at most once a second: a rotation is in use after that second', () => {
    write(first);
    let now = 1_000_000;
    const reloads: boolean[] = [];
    const source = new CaSource(files, (e) => reloads.push(e.ok), () => now);
    expect(source.signer().certPem).toBe(first.certPem);
    write(second);
    now += 999;
    expect(source.signer().certPem).toBe(first.certPem);
    now += 1;
    expect(source.signer().certPem).toBe(second.certPem);
    expect(reloads).toEqual([true]);
  });
});
