/**
 * core/v1 Pod. Every PodSpec, Container and PodStatus field is named (so strict field validation
 * knows them), but deep structures we never act on (volume sources, probes, affinity, security
 * contexts, container states) are free-form: modelling all of PodSpec buys nothing here.
 */
import {
  arr,
  bool,
  CORE,
  enumStr,
  goTyped,
  int32,
  int64,
  keyedList,
  kindAndList,
  kindSchema,
  map,
  obj,
  preserve,
  ref,
  type Schema,
  type Schemas,
  str,
  time,
} from './builder.js';
import { resourceList } from './schemas-core.js';

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
    env: keyedList(obj({ name: str(), value: str(), valueFrom: preserve() }, { required: ['name'], goType: 'v1.EnvVar' }), 'name'),
    envFrom: arr(preserve(), { goType: '[]v1.EnvFromSource' }),
    image: str('Container image name.'),
    imagePullPolicy: enumStr('v1.PullPolicy', 'Always, Never or IfNotPresent.'),
    name: str('Name of the container, unique within the pod.'),
    ports: arr(
      obj(
        { containerPort: int32(), hostIP: str(), hostPort: int32(), name: str(), protocol: enumStr('v1.Protocol') },
        { required: ['containerPort'], goType: 'v1.ContainerPort' },
      ),
      { listType: 'map', mapKeys: ['containerPort', 'protocol'], patchStrategy: 'merge', patchMergeKey: 'containerPort' },
    ),
    resizePolicy: arr(preserve(), { goType: '[]v1.ContainerResizePolicy' }),
    resources: obj(
      { claims: arr(preserve(), { goType: '[]v1.ResourceClaim' }), limits: resourceList(), requests: resourceList() },
      { goType: 'v1.ResourceRequirements' },
    ),
    restartPolicy: enumStr('v1.ContainerRestartPolicy'),
    stdin: bool(),
    stdinOnce: bool(),
    terminationMessagePath: str(),
    terminationMessagePolicy: enumStr('v1.TerminationMessagePolicy'),
    tty: bool(),
    volumeDevices: keyedList(obj({ devicePath: str(), name: str() }, { required: ['name', 'devicePath'], goType: 'v1.VolumeDevice' }), 'devicePath'),
    volumeMounts: keyedList(
      obj(
        {
          mountPath: str(),
          mountPropagation: enumStr('v1.MountPropagationMode'),
          name: str(),
          readOnly: bool(),
          recursiveReadOnly: enumStr('v1.RecursiveReadOnlyMode'),
          subPath: str(),
          subPathExpr: str(),
        },
        { required: ['name', 'mountPath'], goType: 'v1.VolumeMount' },
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
    dnsPolicy: enumStr('v1.DNSPolicy'),
    enableServiceLinks: bool(),
    ephemeralContainers: goTyped('[]v1.EphemeralContainer', keyedList(preserve(), 'name')),
    hostIPC: bool(),
    hostNetwork: bool(),
    hostPID: bool(),
    hostUsers: bool(),
    hostname: str(),
    imagePullSecrets: keyedList(ref(`${CORE}LocalObjectReference`), 'name'),
    initContainers: containers('Containers run to completion before the app containers start.'),
    nodeName: str(),
    nodeSelector: map(str()),
    overhead: resourceList(),
    preemptionPolicy: enumStr('v1.PreemptionPolicy'),
    priority: int32(),
    priorityClassName: str(),
    restartPolicy: enumStr('v1.RestartPolicy', 'Always, OnFailure or Never.'),
    runtimeClassName: str(),
    schedulerName: str(),
    serviceAccount: str('Deprecated alias of serviceAccountName.'),
    serviceAccountName: str('The service account the pod runs as.'),
    setHostnameAsFQDN: bool(),
    shareProcessNamespace: bool(),
    subdomain: str(),
    terminationGracePeriodSeconds: int64(),
    tolerations: arr(
      obj(
        { effect: enumStr('v1.TaintEffect'), key: str(), operator: enumStr('v1.TolerationOperator'), tolerationSeconds: int64(), value: str() },
        { goType: 'v1.Toleration' },
      ),
    ),
    volumes: keyedList(obj({ name: str(), ...free(VOLUME_SOURCES) }, { required: ['name'], goType: 'v1.Volume' }), 'name'),
    ...free(['affinity', 'dnsConfig', 'hostAliases', 'os', 'readinessGates', 'resourceClaims', 'resources', 'schedulingGates', 'securityContext', 'topologySpreadConstraints']),
  },
  { required: ['containers'], goType: 'v1.PodSpec' },
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
        status: enumStr('v1.ConditionStatus'),
        type: enumStr('v1.PodConditionType'),
      },
      { required: ['type', 'status'], goType: 'v1.PodCondition' },
    ),
    'type',
  ),
  hostIP: str(),
  hostIPs: keyedList(obj({ ip: str() }, { goType: 'v1.HostIP' }), 'ip'),
  message: str(),
  nominatedNodeName: str(),
  observedGeneration: int64(),
  phase: enumStr('v1.PodPhase', 'Pending, Running, Succeeded, Failed or Unknown.'),
  podIP: str(),
  podIPs: keyedList(obj({ ip: str() }, { goType: 'v1.PodIP' }), 'ip'),
  qosClass: enumStr('v1.PodQOSClass'),
  reason: str(),
  resize: enumStr('v1.PodResizeStatus'),
  startTime: time(),
  ...free(['containerStatuses', 'ephemeralContainerStatuses', 'initContainerStatuses', 'resourceClaimStatuses']),
}, { goType: 'v1.PodStatus' });

const BINDING = { group: '', version: 'v1', kind: 'Binding' };

export const POD_SCHEMAS: Schemas = {
  [`${CORE}Container`]: container,
  [`${CORE}Binding`]: kindSchema(
    BINDING,
    { target: ref(`${CORE}ObjectReference`, 'The target object that you want to bind to the standard object.') },
    { required: ['target'], description: 'Binding ties one object to another; for example, a pod is bound to a node by a scheduler.' },
  ),
  ...kindAndList(
    CORE,
    POD,
    kindSchema(POD, { spec: podSpec, status: podStatus }, { description: 'Pod is a collection of containers on a host.' }),
  ),
};
