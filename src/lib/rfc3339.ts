/** Kubernetes' wire form of times. */

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function timestampSeconds(d: Date): string {
  return new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
