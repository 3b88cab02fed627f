/** core/v1 Secret as it travels as JSON: data values are base64 text (Go []byte fields). */
import type { V1Secret } from '@kubernetes/client-node';
import type { KObject } from './meta.js';
import type { Wire } from './wire.js';

type SecretFields = Wire<Pick<V1Secret, 'data' | 'immutable' | 'stringData' | 'type'>>;

export interface Secret extends KObject, SecretFields {}
