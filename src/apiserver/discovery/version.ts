/**
 * `/version`: a Kubernetes 1.32 version.Info. kubectl warns when the minor skew to its own version
 * exceeds one, so the server reports the release it mimics.
 */
export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0',
  gitCommit: '70d3cc986aa8221cd1dfb1121852688902d3bf53',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T00:00:00Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;
