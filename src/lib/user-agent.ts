/**
 * client-go's default User-Agent, `<command>/<version> (<os>/<arch>) kubernetes/<commit>`, which
 * kube-apiserver's audit log shows for every request and takes, up to its first `/`, as the field
 * manager of a write: the program, its version (a `v`, nothing after a `-`), Go's names for the
 * platform, and seven hex digits of the commit ("unknown" when not recorded). A controller's client
 * adds `/<its name>`, as client-go's AddUserAgent does for kube-controller-manager's controllers.
 */
import type { BuildVersion } from './version.js';

/** Node's process.platform and process.arch names where Go's GOOS and GOARCH differ. */
const GO_OS: Record<string, string> = { win32: 'windows' };
const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', ppc64: 'ppc64le' };

export function kubernetesUserAgent(
  command: string,
  build: Pick<BuildVersion, 'version' | 'commit'>,
  platform: string = process.platform,
  arch: string = process.arch,
): string {
  const version = build.version ? `v${build.version.replace(/^v/, '').split('-')[0] ?? ''}` : 'unknown';
  const commit = build.commit && build.commit !== 'unknown' ? build.commit.slice(0, 7) : 'unknown';
  return `${command}/${version} (${GO_OS[platform] ?? platform}/${GO_ARCH[arch] ?? arch}) kubernetes/${commit}`;
}
