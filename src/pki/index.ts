/** Pure PKI shared by the API server and the controller: PEM, PKCS#10, X.509 issuance, CA files. */
export { PkiError, type PkiErrorCode } from './errors.js';
export { decodePemBlocks, encodePem, type PemBlock } from './pem.js';
export { generateKeyPair, describeSpki, importSpki, type KeyAlgorithm, type SpkiInfo } from './keys.js';
export { type ParsedName, type SubjectFields } from './name.js';
export { formatIp, parseIp, type SubjectAltNames } from './san.js';
export {
  parseCertificateRequestPem,
  parseCertificateRequestDer,
  createCertificateRequestPem,
  type ParsedCsr,
  type ParseCsrOptions,
  type CreateCsrOptions,
} from './csr.js';
export { parseCertificatePem, certificateDers, readCertificateInfo, type CertificateInfo } from './certificate.js';
export * from './ca.js';
export * from './issue.js';
export {
  BACKDATE_MS,
  SHORT_LIVED_MS,
  MIN_REQUESTED_DURATION_MS,
  DEFAULT_MAX_DURATION_MS,
  formatGoTime,
  type LifetimeOptions,
} from './lifetime.js';
