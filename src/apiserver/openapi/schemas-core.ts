/** core/v1 kinds except Pod (see schemas-pod.ts). */
import {
  arr,
  bool,
  bytes,
  CORE,
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
  type Schemas,
  str,
  time,
} from './builder.js';

const v1 = (kind: string) => ({ group: '', version: 'v1', kind });

const condition = (extra: Record<string, ReturnType<typeof str>> = {}) =>
  obj(
    { lastTransitionTime: time(), message: str(), reason: str(), status: str('True, False or Unknown.'), type: str(), ...extra },
    { required: ['type', 'status'] },
  );

const nodeConfigSource = obj({
  configMap: obj(
    { kubeletConfigKey: str(), name: str(), namespace: str(), resourceVersion: str(), uid: str() },
    { required: ['namespace', 'name', 'kubeletConfigKey'] },
  ),
});

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
        type: str('Used to facilitate programmatic handling of secret data.'),
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
          externalTrafficPolicy: str(),
          healthCheckNodePort: int32(),
          internalTrafficPolicy: str(),
          ipFamilies: arr(str()),
          ipFamilyPolicy: str(),
          loadBalancerClass: str(),
          loadBalancerIP: str(),
          loadBalancerSourceRanges: arr(str()),
          ports: arr(
            obj(
              { appProtocol: str(), name: str(), nodePort: int32(), port: int32(), protocol: str('TCP, UDP or SCTP.'), targetPort: intOrString() },
              { required: ['port'] },
            ),
            { listType: 'map', mapKeys: ['port', 'protocol'], patchStrategy: 'merge', patchMergeKey: 'port' },
          ),
          publishNotReadyAddresses: bool(),
          selector: map(str()),
          sessionAffinity: str('None or ClientIP.'),
          sessionAffinityConfig: obj({ clientIP: obj({ timeoutSeconds: int32() }) }),
          trafficDistribution: str(),
          type: str('ClusterIP, NodePort, LoadBalancer or ExternalName.'),
        }),
        status: obj({
          conditions: keyedList(condition({ observedGeneration: int64() as ReturnType<typeof str> }), 'type'),
          loadBalancer: obj({
            ingress: arr(
              obj({
                hostname: str(),
                ip: str(),
                ipMode: str(),
                ports: arr(obj({ error: str(), port: int32(), protocol: str() }, { required: ['port', 'protocol'] })),
              }),
            ),
          }),
        }),
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
        spec: obj({ finalizers: arr(str()) }),
        status: obj({
          conditions: keyedList(condition(), 'type'),
          phase: str('Active or Terminating.'),
        }),
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
            obj({ effect: str(), key: str(), timeAdded: time(), value: str() }, { required: ['key', 'effect'] }),
          ),
          unschedulable: bool(),
        }),
        status: obj({
          addresses: keyedList(obj({ address: str(), type: str() }, { required: ['type', 'address'] }), 'type'),
          allocatable: map(quantity()),
          capacity: map(quantity()),
          conditions: keyedList(condition({ lastHeartbeatTime: time() }), 'type'),
          config: obj({ active: nodeConfigSource, assigned: nodeConfigSource, error: str(), lastKnownGood: nodeConfigSource }),
          daemonEndpoints: obj({ kubeletEndpoint: obj({ Port: int32() }, { required: ['Port'] }) }),
          features: obj({ supplementalGroupsPolicy: bool() }),
          images: arr(obj({ names: arr(str()), sizeBytes: int64() })),
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
            swap: obj({ capacity: int64() }),
            systemUUID: str(),
          }),
          phase: str(),
          runtimeHandlers: arr(obj({ features: obj({ recursiveReadOnlyMounts: bool(), userNamespaces: bool() }), name: str() })),
          volumesAttached: arr(obj({ devicePath: str(), name: str() }, { required: ['name', 'devicePath'] })),
          volumesInUse: arr(str()),
        }),
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
        series: obj({ count: int32(), lastObservedTime: microTime() }),
        source: ref(`${CORE}EventSource`),
        type: str(),
      },
      { required: ['metadata', 'involvedObject'], description: 'Event is a report of an event somewhere in the cluster.' },
    ),
  ),
};
