/**
 * core/v1 Pod defaulting, as SetObjectDefaults_Pod runs it (k8s.io/kubernetes
 * pkg/apis/core/v1/defaults.go and zz_generated.defaults.go): SetDefaults_Pod, SetDefaults_PodSpec,
 * every volume source's defaults, and per container (init, app and ephemeral) SetDefaults_Container,
 * SetDefaults_ContainerPort, SetDefaults_Probe and SetDefaults_ObjectFieldSelector.
 */
import type { Container, Pod, PodSpec } from '../../../api/pods.js';
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

/** Every member of core/v1 VolumeSource: a volume naming none of them is an emptyDir. */
const VOLUME_SOURCES = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc', 'azureFile', 'configMap',
  'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected', 'portworxVolume', 'scaleIO', 'storageos', 'csi',
  'ephemeral', 'image',
];
const DEFAULT_MODE_SOURCES = ['secret', 'configMap', 'projected', 'downwardAPI'];

/** The plain field defaults of volume sources (SetDefaults_<Source>VolumeSource). */
const SOURCE_DEFAULTS: Record<string, Obj> = {
  hostPath: { type: '' },
  iscsi: { iscsiInterface: 'default' },
  rbd: { pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring' },
  azureDisk: { cachingMode: 'ReadWrite', fsType: 'ext4', readOnly: false, kind: 'Shared' },
  scaleIO: { storageMode: 'ThinProvisioned', fsType: 'xfs' },
};

/** SetDefaults_ObjectFieldSelector: a fieldRef without apiVersion reads v1. */
function defaultFieldRef(holder: unknown): void {
  if (isRecord(holder) && isRecord(holder.fieldRef) && !holder.fieldRef.apiVersion) holder.fieldRef.apiVersion = 'v1';
}

/**
 * setDefaults_Volume (a volume naming no source is an emptyDir) and each source's defaults. The
 * sources are free-form in the served schema, so they are read as untyped JSON.
 */
function defaultVolume(v: Obj): void {
  if (!VOLUME_SOURCES.some((k) => v[k] !== undefined)) v.emptyDir = {};
  for (const k of DEFAULT_MODE_SOURCES) {
    const source = v[k];
    if (isRecord(source) && source.defaultMode === undefined) source.defaultMode = 0o644;
  }
  for (const [k, defaults] of Object.entries(SOURCE_DEFAULTS)) {
    const source = v[k];
    if (!isRecord(source)) continue;
    for (const [field, value] of Object.entries(defaults)) if (source[field] === undefined || source[field] === '') source[field] = value;
  }
  for (const item of records(record(v.downwardAPI).items)) defaultFieldRef(item);
  for (const projection of records(record(v.projected).sources)) {
    for (const item of records(record(projection.downwardAPI).items)) defaultFieldRef(item);
    // SetDefaults_ServiceAccountTokenProjection: an hour.
    if (isRecord(projection.serviceAccountToken) && projection.serviceAccountToken.expirationSeconds === undefined) {
      projection.serviceAccountToken.expirationSeconds = 3600;
    }
  }
}

/**
 * SetDefaults_Container and SetDefaults_ContainerPort. Read as untyped JSON: ephemeral containers
 * are free-form in the served schema, so nothing in them has a known type.
 */
function defaultContainer(c: Obj): void {
  for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) defaultProbe(probe);
  if (!c.imagePullPolicy) c.imagePullPolicy = imageTag(typeof c.image === 'string' ? c.image : '') === 'latest' ? 'Always' : 'IfNotPresent';
  if (!c.terminationMessagePath) c.terminationMessagePath = '/dev/termination-log';
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  for (const port of records(c.ports)) if (!port.protocol) port.protocol = 'TCP';
  for (const env of records(c.env)) defaultFieldRef(env.valueFrom);
}

/** SetDefaults_Pod's part per container: requests default to limits where not given (resources are free-form). */
function requestsFromLimits(c: Container): void {
  const resources = record(c.resources);
  if (!isRecord(resources.limits)) return;
  const requests = isRecord(resources.requests) ? resources.requests : {};
  for (const [k, v] of Object.entries(resources.limits)) if (!(k in requests)) requests[k] = v;
  c.resources = { ...resources, requests };
}

/** SetDefaults_PodSpec. */
function defaultPodSpec(spec: PodSpec): void {
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  if (spec.securityContext === undefined) spec.securityContext = {};
  if (spec.terminationGracePeriodSeconds === undefined) spec.terminationGracePeriodSeconds = 30;
  if (!spec.schedulerName) spec.schedulerName = 'default-scheduler';
  for (const v of spec.volumes ?? []) defaultVolume(v);
}

export function setPodDefaults(obj: Pod): void {
  const spec = obj.spec;
  if (!spec) return;
  defaultPodSpec(spec);
  // SetDefaults_Pod: enableServiceLinks, host-network ports (hostPort = containerPort).
  if (spec.enableServiceLinks === undefined) spec.enableServiceLinks = true;
  for (const list of [spec.initContainers, spec.containers]) {
    for (const c of list ?? []) {
      defaultContainer(c);
      requestsFromLimits(c);
      if (spec.hostNetwork === true) for (const port of c.ports ?? []) if (port.hostPort === undefined) port.hostPort = port.containerPort;
    }
  }
  // Ephemeral containers get the container defaults, not the Pod-level resource and host-port ones.
  for (const c of records(spec.ephemeralContainers)) defaultContainer(c);
}
