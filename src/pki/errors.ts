/** Why a PKI operation failed; lets callers tell the cases apart without matching on message text. */
export type PkiErrorCode =
  | 'pem'
  | 'pem-type'
  | 'pem-headers'
  | 'malformed'
  | 'signature'
  | 'unsupported'
  | 'usage'
  | 'lifetime'
  | 'ca';

/** Every parse/verify/sign failure in src/pki. The message is meant to be shown to users as is. */
export class PkiError extends Error {
  readonly code: PkiErrorCode;

  constructor(message: string, code: PkiErrorCode = 'malformed') {
    super(message);
    this.name = 'PkiError';
    this.code = code;
  }
}
