/**
 * The Kubernetes release whose API the embedded server emulates for the kinds it serves: what `/version`
 * reports and the OpenAPI documents carry (docs/compatibility.md lists the changes since 1.32).
 */
export const KUBE_LEVEL = { major: '1', minor: '37', patch: '0' } as const;
export const KUBE_GIT_VERSION = `v${KUBE_LEVEL.major}.${KUBE_LEVEL.minor}.${KUBE_LEVEL.patch}`;
