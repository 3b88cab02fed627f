import { TAG, children, decodeOid, decodeString, expectTlv, malformed, oid, seq, set, tlv, value, whole, type Tlv } from './der.js';

/** The subject attributes Kubernetes' signer carries over (Go's pkix.Name fields). */
export interface SubjectFields {
  commonName?: string;
  serialNumber?: string;
  countries?: string[];
  provinces?: string[];
  localities?: string[];
  streetAddresses?: string[];
  postalCodes?: string[];
  organizations?: string[];
  organizationalUnits?: string[];
}

/** A parsed X.501 Name: the known fields plus an RFC 4514-style string of the whole name. */
export interface ParsedName extends SubjectFields {
  organizations: string[];
  organizationalUnits: string[];
  countries: string[];
  provinces: string[];
  localities: string[];
  streetAddresses: string[];
  postalCodes: string[];
  /**
   * Values of the Kubernetes user-UID attribute (X509_UID_OID), only when present: a string, or undefined
   * for a value of another ASN.1 type. kube-apiserver takes a client certificate user's UID from it.
   */
  uids?: (string | undefined)[];
  text: string;
}

/** k8s.io/apimachinery's X509UID: a user's UID as a subject attribute (at most one, a string). */
export const X509_UID_OID = '1.3.6.1.4.1.57683.2';

type ListField = 'countries' | 'provinces' | 'localities' | 'streetAddresses' | 'postalCodes' | 'organizations' | 'organizationalUnits';

/** Go's re-encoding order for a subject (pkix.Name.ToRDNSequence), with the short names used in strings. */
const ORDER: { oid: string; short: string; field: ListField | 'commonName' | 'serialNumber' }[] = [
  { oid: '2.5.4.6', short: 'C', field: 'countries' },
  { oid: '2.5.4.8', short: 'ST', field: 'provinces' },
  { oid: '2.5.4.7', short: 'L', field: 'localities' },
  { oid: '2.5.4.9', short: 'STREET', field: 'streetAddresses' },
  { oid: '2.5.4.17', short: 'POSTALCODE', field: 'postalCodes' },
  { oid: '2.5.4.10', short: 'O', field: 'organizations' },
  { oid: '2.5.4.11', short: 'OU', field: 'organizationalUnits' },
  { oid: '2.5.4.3', short: 'CN', field: 'commonName' },
  { oid: '2.5.4.5', short: 'SERIALNUMBER', field: 'serialNumber' },
];
const BY_OID = new Map(ORDER.map((o) => [o.oid, o]));

interface Atv {
  type: string;
  text?: string;
  der: Uint8Array;
}

/**
 * The subject of a DER certificate (Certificate → tbsCertificate → subject), on the fast DER path
 * the request authenticator needs; @peculiar/x509 stays off the hot path.
 */
export function certificateSubject(der: Uint8Array): ParsedName {
  const [tbs] = children(der, expectTlv(der, 0, TAG.SEQUENCE));
  if (!tbs) throw malformed('certificate without tbsCertificate');
  const fields = children(der, tbs);
  // version [0] is optional; then serialNumber, signature, issuer, validity, subject.
  const subject = fields[(fields[0]?.tag === 0xa0 ? 1 : 0) + 4];
  if (!subject || subject.tag !== TAG.SEQUENCE) throw malformed('certificate without subject');
  return parseName(der, subject);
}

/** Parses a Name element. Later CN/SERIALNUMBER values win, list attributes accumulate (as in Go). */
export function parseName(buf: Uint8Array, name: Tlv): ParsedName {
  const out: ParsedName = {
    organizations: [],
    organizationalUnits: [],
    countries: [],
    provinces: [],
    localities: [],
    streetAddresses: [],
    postalCodes: [],
    text: '',
  };
  const unknown: Atv[][] = [];
  for (const rdn of children(buf, name)) {
    if (rdn.tag !== TAG.SET) throw malformed('relative distinguished name is not a SET');
    for (const atvTlv of children(buf, rdn)) {
      const [typeTlv, valueTlv] = children(buf, atvTlv);
      if (atvTlv.tag !== TAG.SEQUENCE || !typeTlv || !valueTlv || typeTlv.tag !== TAG.OID) {
        throw malformed('invalid attribute in name');
      }
      const atv: Atv = {
        type: decodeOid(value(buf, typeTlv)),
        text: decodeString(valueTlv.tag, value(buf, valueTlv)),
        der: whole(buf, valueTlv),
      };
      if (atv.type === X509_UID_OID) (out.uids ??= []).push(atv.text);
      const known = BY_OID.get(atv.type);
      if (!known || atv.text === undefined) {
        unknown.push([atv]);
      } else if (known.field === 'commonName' || known.field === 'serialNumber') {
        out[known.field] = atv.text;
      } else {
        out[known.field].push(atv.text);
      }
    }
  }
  out.text = nameToString([...unknown, ...toRdns(out)]);
  return out;
}

function toRdns(f: SubjectFields): Atv[][] {
  const rdns: Atv[][] = [];
  for (const o of ORDER) {
    const v = f[o.field];
    const values = v === undefined || v === '' ? [] : typeof v === 'string' ? [v] : v;
    if (values.length) rdns.push(values.map((text) => ({ type: o.oid, text, der: encodeString(text) })));
  }
  return rdns;
}

/** DER of a Name built from `fields` the way Go's x509 re-encodes a CSR subject into a certificate. */
export function encodeName(fields: SubjectFields): Buffer {
  // DER orders the members of a SET OF by their encodings, as Go's marshaller does.
  return seq(...toRdns(fields).map((rdn) => set(...rdn.map((a) => seq(oid(a.type), a.der)).sort(Buffer.compare))));
}

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/** PrintableString when the text allows it, UTF8String otherwise (Go's default for untagged strings). */
function encodeString(text: string): Buffer {
  return PRINTABLE.test(text) ? tlv(TAG.PRINTABLE_STRING, Buffer.from(text, 'latin1')) : tlv(TAG.UTF8_STRING, Buffer.from(text, 'utf8'));
}

/** RFC 4514-style string in reverse RDN order, escaped like Go's pkix.RDNSequence.String. */
function nameToString(rdns: Atv[][]): string {
  return rdns
    .slice()
    .reverse()
    .map((rdn) =>
      rdn
        .map((a) => {
          const short = BY_OID.get(a.type)?.short;
          if (!short || a.text === undefined) return `${a.type}=#${Buffer.from(a.der).toString('hex')}`;
          return `${short}=${escapeValue(a.text)}`;
        })
        .join('+'),
    )
    .join(',');
}

function escapeValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i] as string;
    const esc = ',+"\\<>;'.includes(c) || (c === ' ' && (i === 0 || i === v.length - 1)) || (c === '#' && i === 0);
    out += esc ? `\\${c}` : c;
  }
  return out;
}
