/**
 * Who a write is attributed to in managedFields. The field sets themselves are kept by
 * src/apiserver/apply (Update entries on every write, Apply entries for server-side apply).
 */

/** The manager name: the fieldManager parameter, else the User-Agent up to its first '/'. */
export function managerName(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const ua = (userAgent ?? '').split('/')[0] ?? '';
  return ua === '' ? 'unknown' : ua;
}
