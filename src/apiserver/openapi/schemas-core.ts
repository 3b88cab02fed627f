/** core/v1 kinds except Pod (see schemas-pod.ts). */
import {
  arr,
  bool,
  bytes,
  CORE,
  enumStr,
  goTyped,
  int32,
  int64,
  intOrString,
  kindAndList,
  kindSchema,
  keyedList,
  map,
  microTime,
  obj,
  quantity,
  ref,
  type Schema,
  type Schemas,
  str,
  time,
} from './builder.js';

const v1 = (kind: string) => ({ group: '', version: 'v1', kind });

/** A condition of the Go type `goType`, whose `type` field is of the string type `typeGoType`. */
const condition = (goType: string, typeGoType: string, extra: Record<string, ReturnType<typeof str>> = {}) =>
  obj(
    {
      lastTransitionTime: time(),
      message: str(),
      reason: str(),
      status: enumStr('v1.ConditionStatus', 'True, False or Unknown.'),
      type: enumStr(typeGoType),
      ...extra,
    },
    { required: ['type', 'status'], goType },
  );

const nodeConfigSource = obj(
  {
    configMap: obj(
      { kubeletConfigKey: str(), name: str(), namespace: str(), resourceVersion: str(), uid: str() },
      { required: ['namespace', 'name', 'kubeletConfigKey'], goType: 'v1.ConfigMapNodeConfigSource' },
    ),
  },
  { goType: 'v1.NodeConfigSource' },
);

/** core/v1 ResourceList: a named map of quantities. */
export const resourceList = (): Schema => goTyped('v1.ResourceList', map(quantity()));

export const CORE_SCHEMAS: Schemas = {
  [`${CORE}ObjectReference`]: obj({
    apiVersion: str(),
    fieldPath: str(),
    kind: str(),
    name: str(),
    namespace: str(),
    resourceVersion: str(),
    uid: str(),
  }),
  [`${CORE}LocalObjectReference`]: obj({ name: str('Name of the referent.') }),
  ...kindAndList(
    CORE,
    v1('ServiceAccount'),
    kindSchema(
      v1('ServiceAccount'),
      {
        automountServiceAccountToken: bool('Whether pods running as this service account get an API token mounted.'),
        imagePullSecrets: arr(ref(`${CORE}LocalObjectReference`), { description: 'Secrets used to pull images.' }),
        secrets: keyedList(ref(`${CORE}ObjectReference`), 'name', 'Secrets pods running as this account may use.'),
      },
      { description: 'ServiceAccount binds together a name, a principal and a set of secrets.' },
    ),
  ),
  ...kindAndList(
    CORE,
    v1('Secret'),
    kindSchema(
      v1('Secret'),
      {
        data: map(bytes(), 'Secret data; values are base64 encoded.'),
        immutable: bool(),
        stringData: map(str(), 'Write-only convenience field merged into data.'),
        type: enumStr('v1.SecretType', 'Used to facilitate programmatic handling of secret data.'),
      },
      { description: 'Secret holds secret data of a certain type.' },
    ),
  ),
  ...kindAndList(
    CORE,
    v1('ConfigMap'),
    kindSchema(
      v1('ConfigMap'),
      { binaryData: map(bytes()), data: map(str()), immutable: bool() },
      { description: 'ConfigMap holds configuration data for pods to consume.' },
    ),
  ),
  ...kindAndList(
    CORE,
    v1('Service'),
    kindSchema(
      v1('Service'),
      {
        spec: obj({
          allocateLoadBalancerNodePorts: bool(),
          clusterIP: str('Allocated from the service range unless given; "None" for a headless service.'),
          clusterIPs: arr(str()),
          externalIPs: arr(str()),
          externalName: str(),
          externalTrafficPolicy: enumStr('v1.ServiceExternalTrafficPolicy'),
          healthCheckNodePort: int32(),
          internalTrafficPolicy: enumStr('v1.ServiceInternalTrafficPolicy'),
          ipFamilies: arr(enumStr('v1.IPFamily')),
          ipFamilyPolicy: enumStr('v1.IPFamilyPolicy'),
          loadBalancerClass: str(),
          loadBalancerIP: str(),
          loadBalancerSourceRanges: arr(str()),
          ports: arr(
            obj(
              { appProtocol: str(), name: str(), nodePort: int32(), port: int32(), protocol: enumStr('v1.Protocol', 'TCP, UDP or SCTP.'), targetPort: intOrString() },
              { required: ['port'], goType: 'v1.ServicePort' },
            ),
            { listType: 'map', mapKeys: ['port', 'protocol'], patchStrategy: 'merge', patchMergeKey: 'port' },
          ),
          publishNotReadyAddresses: bool(),
          selector: map(str()),
          sessionAffinity: enumStr('v1.ServiceAffinity', 'None or ClientIP.'),
          sessionAffinityConfig: obj(
            { clientIP: obj({ timeoutSeconds: int32() }, { goType: 'v1.ClientIPConfig' }) },
            { goType: 'v1.SessionAffinityConfig' },
          ),
          trafficDistribution: str(),
          type: enumStr('v1.ServiceType', 'ClusterIP, NodePort, LoadBalancer or ExternalName.'),
        }, { goType: 'v1.ServiceSpec' }),
        status: obj({
          conditions: keyedList(condition('v1.Condition', 'string', { observedGeneration: int64() as ReturnType<typeof str> }), 'type'),
          loadBalancer: obj({
            ingress: arr(
              obj({
                hostname: str(),
                ip: str(),
                ipMode: enumStr('v1.LoadBalancerIPMode'),
                ports: arr(
                  obj({ error: str(), port: int32(), protocol: enumStr('v1.Protocol') }, { required: ['port', 'protocol'], goType: 'v1.PortStatus' }),
                ),
              }, { goType: 'v1.LoadBalancerIngress' }),
            ),
          }, { goType: 'v1.LoadBalancerStatus' }),
        }, { goType: 'v1.ServiceStatus' }),
      },
      { description: 'Service is a named abstraction of software service (for example, mysql) consisting of local port that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.' },
    ),
  ),
  ...kindAndList(
    CORE,
    v1('Namespace'),
    kindSchema(
      v1('Namespace'),
      {
        spec: obj({ finalizers: arr(enumStr('v1.FinalizerName')) }, { goType: 'v1.NamespaceSpec' }),
        status: obj({
          conditions: keyedList(condition('v1.NamespaceCondition', 'v1.NamespaceConditionType'), 'type'),
          phase: enumStr('v1.NamespacePhase', 'Active or Terminating.'),
        }, { goType: 'v1.NamespaceStatus' }),
      },
      { description: 'Namespace provides a scope for names.' },
    ),
  ),
  ...kindAndList(
    CORE,
    v1('Node'),
    kindSchema(
      v1('Node'),
      {
        spec: obj({
          configSource: nodeConfigSource,
          externalID: str(),
          podCIDR: str(),
          podCIDRs: arr(str(), { listType: 'set', patchStrategy: 'merge' }),
          providerID: str(),
          taints: arr(
            obj(
              { effect: enumStr('v1.TaintEffect'), key: str(), timeAdded: time(), value: str() },
              { required: ['key', 'effect'], goType: 'v1.Taint' },
            ),
          ),
          unschedulable: bool(),
        }, { goType: 'v1.NodeSpec' }),
        status: obj({
          addresses: keyedList(
            obj({ address: str(), type: enumStr('v1.NodeAddressType') }, { required: ['type', 'address'], goType: 'v1.NodeAddress' }),
            'type',
          ),
          allocatable: resourceList(),
          capacity: resourceList(),
          conditions: keyedList(condition('v1.NodeCondition', 'v1.NodeConditionType', { lastHeartbeatTime: time() }), 'type'),
          config: obj(
            { active: nodeConfigSource, assigned: nodeConfigSource, error: str(), lastKnownGood: nodeConfigSource },
            { goType: 'v1.NodeConfigStatus' },
          ),
          daemonEndpoints: obj(
            { kubeletEndpoint: obj({ Port: int32() }, { required: ['Port'], goType: 'v1.DaemonEndpoint' }) },
            { goType: 'v1.NodeDaemonEndpoints' },
          ),
          features: obj({ supplementalGroupsPolicy: bool() }, { goType: 'v1.NodeFeatures' }),
          images: arr(obj({ names: arr(str()), sizeBytes: int64() }, { goType: 'v1.ContainerImage' })),
          nodeInfo: obj({
            architecture: str(),
            bootID: str(),
            containerRuntimeVersion: str(),
            kernelVersion: str(),
            kubeProxyVersion: str(),
            kubeletVersion: str(),
            machineID: str(),
            operatingSystem: str(),
            osImage: str(),
            swap: obj({ capacity: int64() }, { goType: 'v1.NodeSwapStatus' }),
            systemUUID: str(),
          }, { goType: 'v1.NodeSystemInfo' }),
          phase: enumStr('v1.NodePhase'),
          runtimeHandlers: arr(
            obj(
              {
                features: obj({ recursiveReadOnlyMounts: bool(), userNamespaces: bool() }, { goType: 'v1.NodeRuntimeHandlerFeatures' }),
                name: str(),
              },
              { goType: 'v1.NodeRuntimeHandler' },
            ),
          ),
          volumesAttached: arr(
            obj({ devicePath: str(), name: enumStr('v1.UniqueVolumeName') }, { required: ['name', 'devicePath'], goType: 'v1.AttachedVolume' }),
          ),
          volumesInUse: arr(enumStr('v1.UniqueVolumeName')),
        }, { goType: 'v1.NodeStatus' }),
      },
      { description: 'Node is a worker node.' },
    ),
  ),
  [`${CORE}EventSource`]: obj({ component: str(), host: str() }),
  ...kindAndList(
    CORE,
    v1('Event'),
    kindSchema(
      v1('Event'),
      {
        action: str(),
        count: int32(),
        eventTime: microTime(),
        firstTimestamp: time(),
        involvedObject: ref(`${CORE}ObjectReference`, 'The object this event is about.'),
        lastTimestamp: time(),
        message: str(),
        reason: str(),
        related: ref(`${CORE}ObjectReference`),
        reportingComponent: str(),
        reportingInstance: str(),
        series: obj({ count: int32(), lastObservedTime: microTime() }, { goType: 'v1.EventSeries' }),
        source: ref(`${CORE}EventSource`),
        type: str(),
      },
      { required: ['metadata', 'involvedObject'], description: 'Event is a report of an event somewhere in the cluster.' },
    ),
  ),
};
