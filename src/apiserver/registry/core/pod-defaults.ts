/**
 * core/v1 Pod defaulting, as SetObjectDefaults_Pod runs it (k8s.io/kubernetes
 * pkg/apis/core/v1/defaults.go): SetDefaults_Pod, SetDefaults_PodSpec, the volumes' defaults,
 * and per container SetDefaults_Container, SetDefaults_ContainerPort and SetDefaults_Probe.
 */
import type { KObject } from '../../../api/meta.js';
import { isRecord, record, records } from '../../../lib/json.js';

type Obj = Record<string, unknown>;

/** The tag of an image reference as parseImageName reads it: `latest` when neither tag nor digest is given. */
export function imageTag(image: string): string {
  if (image.includes('@')) return '';
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  return colon >= 0 ? image.slice(colon + 1) : 'latest';
}

/** SetDefaults_Probe, and SetDefaults_HTTPGetAction for its handler. */
function defaultProbe(probe: unknown): void {
  if (!isRecord(probe)) return;
  if (!probe.timeoutSeconds) probe.timeoutSeconds = 1;
  if (!probe.periodSeconds) probe.periodSeconds = 10;
  if (!probe.successThreshold) probe.successThreshold = 1;
  if (!probe.failureThreshold) probe.failureThreshold = 3;
  if (isRecord(probe.httpGet)) {
    if (!probe.httpGet.path) probe.httpGet.path = '/';
    if (!probe.httpGet.scheme) probe.httpGet.scheme = 'HTTP';
  }
}

const VOLUME_SOURCES = ['emptyDir', 'hostPath', 'secret', 'configMap', 'projected', 'downwardAPI', 'persistentVolumeClaim', 'nfs', 'csi', 'ephemeral', 'image'];
const DEFAULT_MODE_SOURCES = ['secret', 'configMap', 'projected', 'downwardAPI'];

/** setDefaults_Volume (a volume naming no source is an emptyDir) and the sources' defaultMode 0644. */
function defaultVolume(v: Obj): void {
  if (!VOLUME_SOURCES.some((k) => v[k] !== undefined)) v.emptyDir = {};
  for (const k of DEFAULT_MODE_SOURCES) {
    const source = v[k];
    if (isRecord(source) && source.defaultMode === undefined) source.defaultMode = 0o644;
  }
}

/** SetDefaults_Container and SetDefaults_ContainerPort. */
function defaultContainer(c: Obj): void {
  for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) defaultProbe(probe);
  if (!c.imagePullPolicy) c.imagePullPolicy = imageTag(typeof c.image === 'string' ? c.image : '') === 'latest' ? 'Always' : 'IfNotPresent';
  if (!c.terminationMessagePath) c.terminationMessagePath = '/dev/termination-log';
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  for (const port of records(c.ports)) if (!port.protocol) port.protocol = 'TCP';
}

/** SetDefaults_Pod's part per container: requests default to limits where not given. */
function requestsFromLimits(c: Obj): void {
  const resources = record(c.resources);
  if (!isRecord(resources.limits)) return;
  const requests = isRecord(resources.requests) ? resources.requests : {};
  for (const [k, v] of Object.entries(resources.limits)) if (!(k in requests)) requests[k] = v;
  c.resources = { ...resources, requests };
}

/** SetDefaults_PodSpec. */
function defaultPodSpec(spec: Obj): void {
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  if (spec.securityContext === undefined) spec.securityContext = {};
  if (spec.terminationGracePeriodSeconds === undefined) spec.terminationGracePeriodSeconds = 30;
  if (!spec.schedulerName) spec.schedulerName = 'default-scheduler';
  for (const v of records(spec.volumes)) defaultVolume(v);
}

export function setPodDefaults(obj: KObject): void {
  if (!isRecord(obj.spec)) return;
  const spec = obj.spec;
  defaultPodSpec(spec);
  // SetDefaults_Pod: enableServiceLinks, host-network ports (hostPort = containerPort).
  if (spec.enableServiceLinks === undefined) spec.enableServiceLinks = true;
  for (const list of [spec.initContainers, spec.containers]) {
    for (const c of records(list)) {
      defaultContainer(c);
      requestsFromLimits(c);
      if (spec.hostNetwork === true) for (const port of records(c.ports)) if (port.hostPort === undefined) port.hostPort = port.containerPort;
    }
  }
}
