/**
 * kube_identity_build_info{version,commit,node_version}: always 1, the Kubernetes components'
 * convention (kubernetes_build_info) for joining a version onto any other series.
 */
import { Gauge, type Registry } from 'prom-client';
import type { BuildVersion } from '../lib/version.js';
import { once } from './registry.js';

export function registerBuildInfo(registry: Registry, v: BuildVersion): void {
  once(registry, 'build-info', () => {
    const gauge = new Gauge({
      name: 'kube_identity_build_info',
      help: 'A metric with a constant 1 value labelled by the version, git commit and Node version kube-identity was built from',
      labelNames: ['version', 'commit', 'node_version'],
      registers: [registry],
    });
    gauge.set({ version: v.version, commit: v.commit, node_version: v.nodeVersion }, 1);
    return gauge;
  });
}
