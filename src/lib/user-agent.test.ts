import { kubernetesUserAgent } from './user-agent.js';

describe('kubernetesUserAgent', () => {
  it("reads as client-go's: program/version (os/arch) kubernetes/commit", () => {
    const commit = '0123456789abcdef0123456789abcdef01234567';
    expect(kubernetesUserAgent('kube-identity', { version: '0.1.0', commit }, 'linux', 'x64')).toBe('kube-identity/v0.1.0 (linux/amd64) kubernetes/0123456');
    expect(kubernetesUserAgent('kube-identity', { version: '1.2.0-rc.1', commit }, 'darwin', 'arm64')).toBe('kube-identity/v1.2.0 (darwin/arm64) kubernetes/0123456');
    expect(kubernetesUserAgent('kube-identity', { version: '0.1.0', commit: 'unknown' }, 'win32', 'ia32')).toBe('kube-identity/v0.1.0 (windows/386) kubernetes/unknown');
  });
});
