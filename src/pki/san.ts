import { isIPv4, isIPv6 } from 'node:net';
import { children, expectTlv, seq, tlv, value, TAG } from './der.js';
import { PkiError } from './errors.js';

/** Subject alternative names, as strings (IPs in Go's net.IP.String form). */
export interface SubjectAltNames {
  dnsNames: string[];
  emailAddresses: string[];
  ipAddresses: string[];
  uris: string[];
}

const RFC822 = 0x81;
const DNS = 0x82;
const URI = 0x86;
const IP = 0x87;

const isAscii = (v: string): boolean => {
  for (let i = 0; i < v.length; i++) if (v.charCodeAt(i) > 0x7f) return false;
  return true;
};

const ascii = (b: Uint8Array, what: string): string => {
  for (const c of b) if (c > 0x7f) throw new PkiError(`x509: SAN ${what} is malformed`);
  return Buffer.from(b).toString('latin1');
};

/** Parses a subjectAltName extension value (GeneralNames); kinds other than the four are ignored. */
export function parseSubjectAltNames(der: Uint8Array): SubjectAltNames {
  const out: SubjectAltNames = { dnsNames: [], emailAddresses: [], ipAddresses: [], uris: [] };
  const root = expectTlv(der, 0, TAG.SEQUENCE);
  for (const gn of children(der, root)) {
    const v = value(der, gn);
    switch (gn.tag) {
      case DNS:
        out.dnsNames.push(ascii(v, 'dNSName'));
        break;
      case RFC822:
        out.emailAddresses.push(ascii(v, 'rfc822Name'));
        break;
      case URI:
        out.uris.push(ascii(v, 'uniformResourceIdentifier'));
        break;
      case IP:
        out.ipAddresses.push(formatIp(v));
        break;
    }
  }
  return out;
}

/** GeneralNames DER in Go's order (DNS, email, IP, URI), or undefined when there are none. */
export function encodeSubjectAltNames(s: Partial<SubjectAltNames>): Buffer | undefined {
  const parts: Buffer[] = [];
  const ia5 = (tag: number, v: string): void => {
    if (!isAscii(v)) throw new PkiError(`x509: ${JSON.stringify(v)} cannot be encoded as an IA5String`);
    parts.push(tlv(tag, Buffer.from(v, 'latin1')));
  };
  for (const d of s.dnsNames ?? []) ia5(DNS, d);
  for (const e of s.emailAddresses ?? []) ia5(RFC822, e);
  for (const ip of s.ipAddresses ?? []) parts.push(tlv(IP, parseIp(ip)));
  for (const u of s.uris ?? []) ia5(URI, u);
  return parts.length ? seq(...parts) : undefined;
}

/** Go's net.IP.String: dotted quad for IPv4 (also IPv4-mapped IPv6), RFC 5952 for IPv6. */
export function formatIp(b: Uint8Array): string {
  if (b.length === 4) return Array.from(b).join('.');
  if (b.length !== 16) throw new PkiError(`x509: cannot parse IP address of length ${b.length}`);
  if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return Array.from(b.subarray(12)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((b[2 * i] as number) << 8) | (b[2 * i + 1] as number));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestLen < 2) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Bytes of an IP address string; IPv4-mapped IPv6 becomes 4 bytes, as Go's marshalling does. */
export function parseIp(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) throw new PkiError(`invalid IP address ${JSON.stringify(ip)}`);
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  const tail: number[] = [];
  if (v4) {
    const q = (v4[1] as string).split('.').map(Number);
    tail.push(((q[0] as number) << 8) | (q[1] as number), ((q[2] as number) << 8) | (q[3] as number));
    text = text.slice(0, -(v4[1] as string).length) + '0:0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (s: string): number[] => (s ? s.split(':').map((h) => parseInt(h, 16)) : []);
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const groups = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  if (tail.length) groups.splice(6, 2, ...tail);
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  if (out.subarray(0, 10).every((x) => x === 0) && out[10] === 0xff && out[11] === 0xff) return out.subarray(12);
  return out;
}
