/**
 * `/version`: a Kubernetes 1.32 version.Info. kubectl warns when the minor skew to its own version
 * exceeds one, so the server reports the API level it serves (1.32), with our own version as semver
 * build metadata (`v1.32.0+kube-identity.0.1.0`), a form kubectl and client-go parse as 1.32.0.
 */
import { buildVersion } from '../../lib/version.js';

const ours = buildVersion();

export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: `v1.32.0+kube-identity.${ours.version}`,
  gitCommit: ours.commit,
  gitTreeState: 'clean',
  buildDate: ours.buildDate || '1970-01-01T00:00:00Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;
