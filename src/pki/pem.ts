import { PkiError } from './errors.js';

export interface PemBlock {
  type: string;
  headers: Record<string, string>;
  der: Uint8Array;
}

const BEGIN = /^-----BEGIN ([^-\r\n]*)-----[ \t]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Every PEM block in `text`, in order. Text outside blocks is allowed (Kubernetes accepts it around
 * certificate chains); a block that starts but is malformed is an error rather than silently skipped.
 */
export function decodePemBlocks(text: string): PemBlock[] {
  const lines = text.split(/\r?\n/);
  const blocks: PemBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const m = line.startsWith('-----BEGIN ') ? BEGIN.exec(line) : null;
    if (!m) continue;
    const type = m[1] ?? '';
    const end = `-----END ${type}-----`;
    let j = i + 1;
    while (j < lines.length && (lines[j] ?? '').trimEnd() !== end) {
      if ((lines[j] ?? '').startsWith('-----')) throw new PkiError(`PEM block "${type}" is not terminated by "${end}"`, 'pem');
      j++;
    }
    if (j >= lines.length) throw new PkiError(`PEM block "${type}" is not terminated by "${end}"`, 'pem');
    blocks.push(parseBody(type, lines.slice(i + 1, j)));
    i = j;
  }
  return blocks;
}

function parseBody(type: string, body: string[]): PemBlock {
  const headers: Record<string, string> = {};
  let k = 0;
  for (; k < body.length; k++) {
    const line = body[k] ?? '';
    const colon = line.indexOf(':');
    if (colon < 0) break;
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  let b64 = body.slice(k).join('');
  if (b64.includes(' ') || b64.includes('\t')) b64 = b64.replace(/[ \t]/g, '');
  const der = Buffer.from(b64, 'base64');
  // Canonical base64 is exactly what node's decode encodes back to itself, and a round trip costs a
  // fraction of the regular expression on a certificate's ~900 characters; the rest takes the full check.
  if (der.toString('base64') !== b64 && (!BASE64.test(b64) || b64.length % 4 !== 0)) {
    throw new PkiError(`PEM block "${type}" has invalid base64 content`, 'pem');
  }
  return { type, headers, der: new Uint8Array(der) };
}

/** A PEM block with 64-character lines and a trailing newline, as Go's encoding/pem writes it. */
export function encodePem(type: string, der: Uint8Array): string {
  const b64 = Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64');
  let out = `-----BEGIN ${type}-----\n`;
  for (let i = 0; i < b64.length; i += 64) out += b64.slice(i, i + 64) + '\n';
  return out + `-----END ${type}-----\n`;
}
