/**
 * PKI issuance benchmark: certificates issued per second from prepared CSRs, per CSR key type,
 * next to the raw node:crypto P-256 sign rate measured in the same process (the compass ratio
 * "issuance >= 25% of raw sign"), and the "import + verify + sign" crypto floor of a fresh CSR.
 * Run: `node dist/bench/pki.js [n]` after `npm run build`, or call runPkiBench({ n }).
 */
import 'reflect-metadata';
import crypto from 'node:crypto';
import os from 'node:os';
import { createCertificateAuthority, prepareCaSigner, type CaSigner } from '../src/pki/ca.js';
import { createCertificateRequestPem, parseCertificateRequestPem, type ParsedCsr } from '../src/pki/csr.js';
import { issueCertificate } from '../src/pki/issue.js';
import { generateKeyPair, importSpki, type KeyAlgorithm } from '../src/pki/keys.js';
import { certificateLifetime } from '../src/pki/lifetime.js';
import { parseBenchArgs } from './lib/cli.js';
import { formatTable, isMain } from './lib/report.js';

export interface PkiBenchRow {
  /** Raw P-256 sign rate measured interleaved with this row (the ratios' denominator). */
  rawSignPerSec: number;
  /** Certificates per second from already parsed (and verified) CSRs: build TBS + sign + PEM. */
  issuancesPerSec: number;
  ratioToRawSign: number;
  /** Per second for the whole signer step: PEM parse + signature verify + lifetime + issue. */
  parseVerifyIssuePerSec: number;
  parseVerifyIssueRatioToRawSign: number;
}

export interface PkiBenchResult {
  name: 'pki';
  params: { n: number; rounds: number; caKey: KeyAlgorithm; distinctKeysPerType: number; usages: string[] };
  /** Best raw crypto.sign P-256 rate over all rounds. */
  rawSignPerSec: number;
  /** JWK import + verify + sign with P-256 keys: the per-CSR crypto floor if nothing is reused. */
  importVerifySignFloorPerSec: number;
  results: Record<string, PkiBenchRow>;
  cores: number;
  node: string;
}

const CSR_KEYS: KeyAlgorithm[] = ['ECDSA-P256', 'ECDSA-P384', 'RSA-2048', 'Ed25519'];
const USAGES = ['digital signature', 'key encipherment', 'client auth'];
const HOUR = 3_600_000;

async function rate(n: number, fn: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < Math.min(50, n); i++) await fn(i); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  return Math.round(n / secs);
}

/** n CSR PEMs over a small pool of keys (RSA key generation would otherwise dominate set-up). */
async function prepareCsrs(alg: KeyAlgorithm, n: number, pool: number): Promise<string[]> {
  const keys = Array.from({ length: Math.min(n, pool) }, () => generateKeyPair(alg).privateKeyPem);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(await createCertificateRequestPem({ privateKeyPem: keys[i % keys.length] as string, commonName: `system:node:n${i}`, organizations: ['system:nodes'] }));
  }
  return out;
}

/**
 * Best-of-`rounds` rates, with the raw-sign reference measured in the same rounds: on a shared box
 * the load changes from second to second, and interleaving keeps the ratio meaningful.
 */
async function measureRow(ca: CaSigner, pems: string[], rawSign: () => unknown, rounds: number): Promise<PkiBenchRow> {
  const parsed: ParsedCsr[] = pems.map((p) => parseCertificateRequestPem(p));
  const lifetime = (): { notBefore: Date; notAfter: Date } =>
    certificateLifetime({ now: new Date(), caNotAfter: ca.notAfter, maxDuration: 24 * HOUR });
  const issue = (csr: ParsedCsr): Promise<string> =>
    issueCertificate(ca, { subject: csr.subject, publicKeyDer: csr.publicKeyDer, usages: USAGES, ...lifetime() });
  let raw = 0;
  let issuancesPerSec = 0;
  let parseVerifyIssuePerSec = 0;
  for (let round = 0; round < rounds; round++) {
    raw = Math.max(raw, await rate(pems.length, rawSign));
    issuancesPerSec = Math.max(issuancesPerSec, await rate(parsed.length, (i) => issue(parsed[i] as ParsedCsr)));
    parseVerifyIssuePerSec = Math.max(parseVerifyIssuePerSec, await rate(pems.length, (i) => issue(parseCertificateRequestPem(pems[i] as string))));
  }
  const r = (x: number): number => Math.round((x / raw) * 1000) / 1000;
  return {
    rawSignPerSec: raw,
    issuancesPerSec,
    ratioToRawSign: r(issuancesPerSec),
    parseVerifyIssuePerSec,
    parseVerifyIssueRatioToRawSign: r(parseVerifyIssuePerSec),
  };
}

export async function runPkiBench(
  opts: { n?: number; rounds?: number; keyTypes?: KeyAlgorithm[]; distinctKeysPerType?: number } = {},
): Promise<PkiBenchResult> {
  const n = opts.n ?? 2000;
  const rounds = opts.rounds ?? 3;
  const pool = opts.distinctKeysPerType ?? 16;
  const ecCa = prepareCaSigner(await createCertificateAuthority({ commonName: 'bench-ca' }));
  const rsaCa = prepareCaSigner(await createCertificateAuthority({ commonName: 'bench-rsa-ca', keyAlgorithm: 'RSA-2048' }));

  const tbsLike = crypto.randomBytes(450);
  const rawSign = (): Buffer => crypto.sign('sha256', tbsLike, ecCa.privateKey);

  const results: Record<string, PkiBenchRow> = {};
  let p256: string[] = [];
  for (const alg of opts.keyTypes ?? CSR_KEYS) {
    const pems = await prepareCsrs(alg, n, pool);
    if (alg === 'ECDSA-P256') p256 = pems;
    results[alg] = await measureRow(ecCa, pems, rawSign, rounds);
  }
  if (p256.length) results['ECDSA-P256 (RSA-2048 CA)'] = await measureRow(rsaCa, p256.slice(0, Math.max(1, Math.floor(n / 4))), rawSign, rounds);

  const floorKeys = p256.length ? p256.map((p) => parseCertificateRequestPem(p, { verifySignature: false })) : [];
  const sig = floorKeys.length ? crypto.sign('sha256', tbsLike, crypto.createPrivateKey(generateKeyPair().privateKeyPem)) : Buffer.alloc(0);
  const importVerifySignFloorPerSec = floorKeys.length
    ? await rate(floorKeys.length, (i) => {
        crypto.verify('sha256', tbsLike, importSpki((floorKeys[i] as ParsedCsr).publicKeyDer), sig);
        return crypto.sign('sha256', tbsLike, ecCa.privateKey);
      })
    : 0;

  return {
    name: 'pki',
    rawSignPerSec: Math.max(0, ...Object.values(results).map((row) => row.rawSignPerSec)),
    params: { n, rounds, caKey: 'ECDSA-P256', distinctKeysPerType: pool, usages: USAGES },
    importVerifySignFloorPerSec,
    results,
    cores: os.availableParallelism(),
    node: process.version,
  };
}

/** A plain-text table of the result rows. */
export function formatPkiTable(r: PkiBenchResult): string {
  const head = ['CSR key', 'raw sign/s', 'issue/s', 'x raw sign', 'parse+verify+issue/s', 'x raw sign'];
  const rows = Object.entries(r.results).map(([k, v]) => [k, String(v.rawSignPerSec), String(v.issuancesPerSec), v.ratioToRawSign.toFixed(3), String(v.parseVerifyIssuePerSec), v.parseVerifyIssueRatioToRawSign.toFixed(3)]);
  return [
    `best raw crypto.sign P-256: ${r.rawSignPerSec}/s; import+verify+sign floor (P-256): ${r.importVerifySignFloorPerSec}/s; CA ${r.params.caKey} unless noted; n=${r.params.n}, best of ${r.params.rounds}; ${r.cores} cores; node ${r.node}`,
    formatTable(head, rows),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const args = parseBenchArgs(process.argv.slice(2), { command: 'bench/pki', usage: 'usage: node dist/bench/pki.js [n]\nIssuance against raw signing, n CSRs per round (default 2000).', options: {}, positionals: 1 });
  const n = Number(args.positionals[0] ?? 2000);
  if (!Number.isInteger(n) || n < 1) args.fail(`n must be a positive integer, got ${args.positionals[0]}`);
  const result = await runPkiBench({ n });
  console.log(JSON.stringify(result));
  console.log(formatPkiTable(result));
}
