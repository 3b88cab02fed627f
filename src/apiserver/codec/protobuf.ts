/**
 * Decoding of `application/vnd.kubernetes.protobuf` request bodies. kubectl 1.32's typed clients
 * send them for create token, certificate approve/deny, create <kind>, auth can-i and auth whoami,
 * with no fallback, so every kind we serve is decodable. Replies stay JSON (the client accepts it).
 */
import type { KObject } from '../../api/meta.js';
import { ApiError, errors } from '../http/errors.js';
import { decodeMessage, hasMessage, toJson } from './protobuf-json.js';
import { apiVersionOf } from '../../api/resources.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** "k8s\0": the prefix of every Kubernetes protobuf envelope. */
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Kinds whose message name differs from the kind (two Event types share a kind). */
const MESSAGE_NAMES: Readonly<Record<string, string>> = {
  'v1/Event': 'CoreEvent',
  'events.k8s.io/v1/Event': 'EventsEvent',
};

interface GVK {
  group: string;
  version: string;
  kind: string;
}

/** The protobuf message for a kind, or undefined when we cannot decode it. */
export function messageFor(gvk: GVK): string | undefined {
  const gv = apiVersionOf(gvk);
  const name = MESSAGE_NAMES[`${gv}/${gvk.kind}`] ?? gvk.kind;
  return hasMessage(name) ? name : undefined;
}

/** Runs a decoding step, turning whatever protobufjs or JSON.parse throws into a 400. */
function attempt<T>(step: () => T, cannot: (why: string) => ApiError): T {
  try {
    return step();
  } catch (err) {
    throw cannot(err instanceof Error ? err.message : String(err));
  }
}

/** Decodes a protobuf body for an endpoint expecting `expected`; throws only ApiError. */
export function decodeProtobufObject(body: Buffer, expected: GVK): KObject {
  const gv = apiVersionOf(expected);
  const message = messageFor(expected);
  if (!message) throw errors.unsupportedMediaType(['application/json', 'application/yaml']);
  const cannot = (why: string): ApiError =>
    errors.badRequest(`${expected.kind} in version "${expected.version}" cannot be handled as a ${expected.kind}: ${why}`);
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw cannot('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  }
  const envelope = attempt(() => toJson('Unknown', decodeMessage('Unknown', body.subarray(MAGIC.length))), cannot);
  const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const dataGv = typeMeta.apiVersion || gv;
  if (dataGv !== gv) {
    throw errors.badRequest(`the API version in the data (${dataGv}) does not match the expected API version (${gv})`);
  }
  if (typeMeta.kind && typeMeta.kind !== expected.kind) throw cannot(`unexpected kind "${typeMeta.kind}"`);
  const encoding = envelope.contentEncoding;
  if (typeof encoding === 'string' && encoding !== '') throw cannot(`unsupported content encoding "${encoding}"`);
  const raw = Buffer.from(String(envelope.raw ?? ''), 'base64');
  const object = attempt(() => toJson(message, decodeMessage(message, raw)), cannot);
  return { apiVersion: gv, kind: expected.kind, ...object } as KObject;
}
