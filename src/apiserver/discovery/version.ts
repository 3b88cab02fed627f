/**
 * `/version`: a Kubernetes 1.37 version.Info, the API level the server emulates (docs/compatibility.md
 * lists what changed since 1.32). The server reports that level with our own version as semver build
 * metadata (`v1.37.0+kube-identity.0.1.0`), a form kubectl and client-go parse as 1.37.0; kubectl 1.32
 * warns on `kubectl version` that the skew exceeds one minor, and works on.
 */
import { KUBE_GIT_VERSION, KUBE_LEVEL } from '../../api/kube-level.js';
import { buildVersion } from '../../lib/version.js';

const ours = buildVersion();

export const VERSION_INFO = {
  major: KUBE_LEVEL.major,
  minor: KUBE_LEVEL.minor,
  gitVersion: `${KUBE_GIT_VERSION}+kube-identity.${ours.version}`,
  gitCommit: ours.commit,
  gitTreeState: 'clean',
  buildDate: ours.buildDate || '1970-01-01T00:00:00Z',
  // What kube-apiserver 1.37 is built with; no Go runs here, clients only display it.
  goVersion: 'go1.26.4',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;
