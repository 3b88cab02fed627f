/**
 * core/v1 Pod. Every PodSpec, Container and PodStatus field is named (so strict field validation
 * knows them), but deep structures we never act on (volume sources, probes, affinity, security
 * contexts, container states) are free-form: modelling all of PodSpec buys nothing here.
 */
import {
  arr,
  bool,
  CORE,
  int32,
  int64,
  keyedList,
  kindAndList,
  kindSchema,
  map,
  obj,
  preserve,
  quantity,
  ref,
  type Schema,
  type Schemas,
  str,
  time,
} from './builder.js';

const POD = { group: '', version: 'v1', kind: 'Pod' };
/** Named but unmodelled fields: any JSON value is kept. */
const free = (names: string[]): Record<string, Schema> =>
  Object.fromEntries(names.map((n) => [n, { 'x-kubernetes-preserve-unknown-fields': true }]));

/** The volume source members inlined into a Volume. */
const VOLUME_SOURCES = [
  'awsElasticBlockStore', 'azureDisk', 'azureFile', 'cephfs', 'cinder', 'configMap', 'csi', 'downwardAPI',
  'emptyDir', 'ephemeral', 'fc', 'flexVolume', 'flocker', 'gcePersistentDisk', 'gitRepo', 'glusterfs', 'hostPath',
  'image', 'iscsi', 'nfs', 'persistentVolumeClaim', 'photonPersistentDisk', 'portworxVolume', 'projected',
  'quobyte', 'rbd', 'scaleIO', 'secret', 'storageos', 'vsphereVolume',
];


const container: Schema = obj(
  {
    args: arr(str()),
    command: arr(str()),
    env: keyedList(obj({ name: str(), value: str(), valueFrom: preserve() }, { required: ['name'] }), 'name'),
    envFrom: arr(preserve()),
    image: str('Container image name.'),
    imagePullPolicy: str('Always, Never or IfNotPresent.'),
    name: str('Name of the container, unique within the pod.'),
    ports: arr(
      obj(
        { containerPort: int32(), hostIP: str(), hostPort: int32(), name: str(), protocol: str() },
        { required: ['containerPort'] },
      ),
      { listType: 'map', mapKeys: ['containerPort', 'protocol'], patchStrategy: 'merge', patchMergeKey: 'containerPort' },
    ),
    resizePolicy: arr(preserve()),
    resources: obj({ claims: arr(preserve()), limits: map(quantity()), requests: map(quantity()) }),
    restartPolicy: str(),
    stdin: bool(),
    stdinOnce: bool(),
    terminationMessagePath: str(),
    terminationMessagePolicy: str(),
    tty: bool(),
    volumeDevices: keyedList(obj({ devicePath: str(), name: str() }, { required: ['name', 'devicePath'] }), 'devicePath'),
    volumeMounts: keyedList(
      obj(
        {
          mountPath: str(),
          mountPropagation: str(),
          name: str(),
          readOnly: bool(),
          recursiveReadOnly: str(),
          subPath: str(),
          subPathExpr: str(),
        },
        { required: ['name', 'mountPath'] },
      ),
      'mountPath',
    ),
    workingDir: str(),
    ...free(['lifecycle', 'livenessProbe', 'readinessProbe', 'securityContext', 'startupProbe']),
  },
  { required: ['name'] },
);

const containers = (description: string): Schema =>
  keyedList(ref(`${CORE}Container`), 'name', description);

const podSpec: Schema = obj(
  {
    activeDeadlineSeconds: int64(),
    automountServiceAccountToken: bool(),
    containers: containers('Containers belonging to the pod.'),
    dnsPolicy: str(),
    enableServiceLinks: bool(),
    ephemeralContainers: keyedList(preserve(), 'name'),
    hostIPC: bool(),
    hostNetwork: bool(),
    hostPID: bool(),
    hostUsers: bool(),
    hostname: str(),
    imagePullSecrets: keyedList(ref(`${CORE}LocalObjectReference`), 'name'),
    initContainers: containers('Containers run to completion before the app containers start.'),
    nodeName: str(),
    nodeSelector: map(str()),
    overhead: map(quantity()),
    preemptionPolicy: str(),
    priority: int32(),
    priorityClassName: str(),
    restartPolicy: str('Always, OnFailure or Never.'),
    runtimeClassName: str(),
    schedulerName: str(),
    serviceAccount: str('Deprecated alias of serviceAccountName.'),
    serviceAccountName: str('The service account the pod runs as.'),
    setHostnameAsFQDN: bool(),
    shareProcessNamespace: bool(),
    subdomain: str(),
    terminationGracePeriodSeconds: int64(),
    tolerations: arr(
      obj({ effect: str(), key: str(), operator: str(), tolerationSeconds: int64(), value: str() }),
    ),
    volumes: keyedList(obj({ name: str(), ...free(VOLUME_SOURCES) }, { required: ['name'] }), 'name'),
    ...free(['affinity', 'dnsConfig', 'hostAliases', 'os', 'readinessGates', 'resourceClaims', 'resources', 'schedulingGates', 'securityContext', 'topologySpreadConstraints']),
  },
  { required: ['containers'] },
);


const podStatus: Schema = obj({
  conditions: keyedList(
    obj(
      {
        lastProbeTime: time(),
        lastTransitionTime: time(),
        message: str(),
        observedGeneration: int64(),
        reason: str(),
        status: str(),
        type: str(),
      },
      { required: ['type', 'status'] },
    ),
    'type',
  ),
  hostIP: str(),
  hostIPs: keyedList(obj({ ip: str() }), 'ip'),
  message: str(),
  nominatedNodeName: str(),
  observedGeneration: int64(),
  phase: str('Pending, Running, Succeeded, Failed or Unknown.'),
  podIP: str(),
  podIPs: keyedList(obj({ ip: str() }), 'ip'),
  qosClass: str(),
  reason: str(),
  resize: str(),
  startTime: time(),
  ...free(['containerStatuses', 'ephemeralContainerStatuses', 'initContainerStatuses', 'resourceClaimStatuses']),
});

export const POD_SCHEMAS: Schemas = {
  [`${CORE}Container`]: container,
  ...kindAndList(
    CORE,
    POD,
    kindSchema(POD, { spec: podSpec, status: podStatus }, { description: 'Pod is a collection of containers on a host.' }),
  ),
};
