/**
 * Assertions that hold for both the chart's and deploy/'s controller Deployment: the hardened pod
 * shape, probes on the metrics listener, and a configuration file the real config loader accepts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadControllerConfig } from '../../src/config/load.js';
import type { ControllerConfig } from '../../src/config/schema.js';
import { controllerContainer, podSpec, type Obj } from './manifests.js';

export function expectHardenedController(deployment: Obj): void {
  const pod = podSpec(deployment);
  const c = controllerContainer(deployment);
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } });
  expect(c.securityContext).toMatchObject({
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  });
  expect((c.resources as Obj).requests).toBeDefined();
  expect(((c.resources as Obj).limits as Obj).memory).toBeDefined();
  // readOnlyRootFilesystem needs a writable /tmp.
  const mounts = c.volumeMounts as Obj[];
  const tmp = mounts.find((m) => m.mountPath === '/tmp');
  expect((pod.volumes as Obj[]).find((v) => v.name === tmp?.name)).toHaveProperty('emptyDir');
  // Probes hit the named metrics port.
  const port = (c.ports as Obj[]).find((p) => p.name === 'http-metrics');
  expect(port).toBeDefined();
  expect(c.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'http-metrics' } });
  expect(c.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'http-metrics' } });
  expect((c.args as string[])[0]).toBe('controller');
  // Everything the namespaced Roles cover is placed in the pod's own namespace.
  for (const name of ['KUBE_IDENTITY_LEADER_ELECTION_NAMESPACE', 'KUBE_IDENTITY_CONTROLLER_NAMESPACE', 'KUBE_IDENTITY_TRUST_BUNDLE_NAMESPACE']) {
    expect(c.env).toContainEqual({ name, valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
  }
}

/** The env a pod in `namespace` gets from the downward API, as the config loader would see it. */
export function podEnv(deployment: Obj, namespace: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of (controllerContainer(deployment).env ?? []) as Obj[]) {
    const ref = ((e.valueFrom as Obj | undefined)?.fieldRef as Obj | undefined)?.fieldPath;
    if (typeof e.value === 'string') out[String(e.name)] = e.value;
    else if (ref === 'metadata.namespace') out[String(e.name)] = namespace;
  }
  return out;
}

/**
 * The container's --config file, taken from the mounted ConfigMap, loaded by the real loader with the
 * environment the pod would get in `namespace`.
 */
export async function loadMountedConfig(deployment: Obj, configMaps: Obj[], namespace = 'kube-identity'): Promise<ControllerConfig> {
  const env = podEnv(deployment, namespace);
  const c = controllerContainer(deployment);
  const flag = (c.args as string[]).find((a) => a.startsWith('--config='));
  if (!flag) throw new Error('no --config flag');
  const path = flag.slice('--config='.length);
  const mount = (c.volumeMounts as Obj[]).find((m) => path.startsWith(`${String(m.mountPath)}/`));
  const volume = (podSpec(deployment).volumes as Obj[]).find((v) => v.name === mount?.name);
  const cmName = (volume?.configMap as Obj | undefined)?.name;
  const cm = configMaps.find((m) => m.kind === 'ConfigMap' && (m.metadata as Obj).name === cmName);
  const text = ((cm?.data ?? {}) as Record<string, string>)[path.slice(String(mount?.mountPath).length + 1)];
  if (text === undefined) throw new Error(`${path} is not backed by a ConfigMap key`);
  const dir = mkdtempSync(join(tmpdir(), 'ki-config-'));
  try {
    writeFileSync(join(dir, 'config.yaml'), text);
    return await loadControllerConfig({ file: join(dir, 'config.yaml'), env });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
