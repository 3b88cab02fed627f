/** core/v1 Service as it travels as JSON: the served schema models every field (openapi/schemas-core.ts). */
import type { V1ServicePort, V1ServiceSpec, V1ServiceStatus } from '@kubernetes/client-node';
import type { KObject } from './meta.js';
import type { Wire } from './wire.js';

export type ServiceSpec = Wire<V1ServiceSpec>;
export type ServicePort = Wire<V1ServicePort>;

export interface Service extends KObject {
  spec?: ServiceSpec;
  status?: Wire<V1ServiceStatus>;
}
