/**
 * core/v1 Pod as it travels as JSON, over client-node's models. The served schema
 * (apiserver/openapi/schemas-pod.ts) names every field but keeps deep structures free-form (probes,
 * security contexts, volume sources, container statuses, …): any JSON value is stored there, so
 * those fields read as unknown here and their readers check what they find.
 */
import type { V1Container, V1EnvVar, V1ObjectReference, V1PodSpec, V1PodStatus, V1Volume } from '@kubernetes/client-node';
import type { KObject } from './meta.js';
import type { FreeForm, Wire } from './wire.js';

export type EnvVar = Wire<FreeForm<V1EnvVar, 'valueFrom'>>;

export type Container = Wire<
  FreeForm<
    Omit<V1Container, 'env' | 'envFrom'>,
    'lifecycle' | 'livenessProbe' | 'readinessProbe' | 'resizePolicy' | 'resources' | 'securityContext' | 'startupProbe'
  >
> & { env?: EnvVar[]; envFrom?: unknown[] };

/** A volume: its name, and one source, free-form. */
export type Volume = Wire<FreeForm<V1Volume, Exclude<keyof V1Volume, 'name'>>>;

export type PodSpec = Wire<
  FreeForm<
    Omit<V1PodSpec, 'containers' | 'ephemeralContainers' | 'initContainers' | 'volumes'>,
    | 'affinity'
    | 'dnsConfig'
    | 'hostAliases'
    | 'os'
    | 'readinessGates'
    | 'resourceClaims'
    | 'resources'
    | 'schedulingGates'
    | 'securityContext'
    | 'topologySpreadConstraints'
  >
> & { containers?: Container[]; initContainers?: Container[]; ephemeralContainers?: unknown[]; volumes?: Volume[] };

export type PodStatus = Wire<FreeForm<V1PodStatus, 'containerStatuses' | 'ephemeralContainerStatuses' | 'initContainerStatuses' | 'resourceClaimStatuses'>>;

export interface Pod extends KObject {
  spec?: PodSpec;
  status?: PodStatus;
}

/** What pods/binding takes: the pod (by name, and uid and resourceVersion as preconditions) and the Node to bind it to. */
export interface Binding extends KObject {
  target: Wire<V1ObjectReference>;
}

/** The annotation a kubelet puts on the mirror of a static pod (kubelet/types ConfigMirrorAnnotationKey). */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** A pod the kubelet made from a static manifest: the annotation's presence counts, whatever its value. */
export const isMirrorPod = (pod: Pod): boolean => pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
