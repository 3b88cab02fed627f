/**
 * core/v1 Event as it travels as JSON, over client-node's model. events.k8s.io/v1 Events are
 * converted to this form (apiserver/registry/events/conversion.ts) before they are validated or printed.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import type { KObject } from './meta.js';
import type { Wire } from './wire.js';

export type Event = KObject & Wire<Omit<CoreV1Event, 'apiVersion' | 'kind' | 'metadata'>>;
