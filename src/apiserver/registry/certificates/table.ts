/**
 * Server-side printing of CSRs (`kubectl get csr`): upstream's column set and cell rules from
 * pkg/printers.
 */
import { CONDITION_APPROVED, CONDITION_DENIED, CONDITION_FAILED, type CertificateSigningRequestSpec } from '../../../api/certificates.js';
import type { KObject } from '../../../api/meta.js';
import type { TableColumn, TableConvertor } from '../generic/strategy.js';
import { ageCell, column, humanDuration, NAME_COLUMN } from '../generic/table.js';

/** `Denied` over `Approved` over `Pending`, then `,Failed` and `,Issued`; condition status is ignored. */
export function csrConditionCell(obj: KObject): string {
  const status = (obj.status ?? {}) as { conditions?: { type?: string }[]; certificate?: unknown };
  const types = new Set((Array.isArray(status.conditions) ? status.conditions : []).map((c) => c?.type));
  let cell = types.has(CONDITION_DENIED) ? 'Denied' : types.has(CONDITION_APPROVED) ? 'Approved' : 'Pending';
  if (types.has(CONDITION_FAILED)) cell += ',Failed';
  // Stored certificates are valid base64, so non-empty text means non-empty bytes.
  const issued = typeof status.certificate === 'string' && status.certificate.length > 0;
  if (issued) cell += ',Issued';
  return cell;
}

const col = (name: string, description: string): TableColumn => column(name, 'string', description);

const COLUMNS: TableColumn[] = [
  NAME_COLUMN,
  col(
    'Age',
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  ),
  col(
    'SignerName',
    'Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it\'s a kubelet client certificate, it is assigned\n    "kubernetes.io/kube-apiserver-client-kubelet".\n 2. If it\'s a kubelet serving certificate, it is assigned\n    "kubernetes.io/kubelet-serving".\n 3. Otherwise, it is assigned "kubernetes.io/legacy-unknown".\nDistribution of trust for signers happens out of band.\nYou can select on this field using `spec.signerName`.',
  ),
  col('Requestor', 'Name of the user which made this request.'),
  col(
    'RequestedDuration',
    'expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.',
  ),
  col('Condition', 'State of the request, approved, denied, or pending.'),
];

export const csrTable: TableConvertor = {
  columns: COLUMNS,
  cells(obj: KObject, now: Date): unknown[] {
    const spec = (obj.spec ?? {}) as Partial<CertificateSigningRequestSpec>;
    const exp = spec.expirationSeconds;
    return [
      obj.metadata?.name ?? '',
      ageCell(obj.metadata?.creationTimestamp, now),
      spec.signerName ? spec.signerName : '<none>',
      spec.username ?? '',
      typeof exp === 'number' ? humanDuration(exp * 1000) : '<none>',
      csrConditionCell(obj),
    ];
  },
};
