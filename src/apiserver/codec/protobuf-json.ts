/**
 * protobufjs Types built from the compact field tables, and the mapping of a decoded message to the
 * JSON form the rest of the server uses: bytes as base64, Time as RFC3339, MicroTime with six
 * fractional digits, int64 as number, maps as objects, unset and (non-pointer) zero fields omitted.
 */
import protobuf from 'protobufjs';
import { isRecord } from '../../lib/json.js';
import { formatMicroTime, formatTime } from '../../lib/rfc3339.js';
import { CORE_MESSAGES } from './protobuf-core.js';
import { GROUP_MESSAGES } from './protobuf-groups.js';
import { POD_MESSAGES } from './protobuf-pod.js';
import { META_MESSAGES, type MessageDesc, WRAPPERS } from './protobuf-schema.js';

const ALL: Readonly<Record<string, MessageDesc>> = {
  ...WRAPPERS,
  ...META_MESSAGES,
  ...CORE_MESSAGES,
  ...POD_MESSAGES,
  ...GROUP_MESSAGES,
};

function buildRoot(): protobuf.Namespace {
  const root = new protobuf.Root();
  const ns = root.define('k8s');
  for (const [name, desc] of Object.entries(ALL)) {
    const type = new protobuf.Type(name);
    for (const [field, [id, fieldType, flag]] of Object.entries(desc)) {
      if (flag === 'm') type.add(new protobuf.MapField(field, id, 'string', fieldType));
      else type.add(new protobuf.Field(field, id, fieldType, flag === 'r' ? 'repeated' : 'optional'));
    }
    ns.add(type);
  }
  root.resolveAll();
  return ns;
}

const NS = buildRoot();

export function hasMessage(name: string): boolean {
  return Object.hasOwn(ALL, name) && !Object.hasOwn(WRAPPERS, name);
}

type Msg = Record<string, unknown>;

/**
 * Decodes bytes as the named message; protobufjs throws on malformed input. Its Message type
 * declares no fields (they come from the descriptor at run time), so the message is read as a
 * plain record, which it always is.
 */
export function decodeMessage(name: string, bytes: Uint8Array): Msg {
  const message: unknown = NS.lookupType(name).decode(bytes);
  if (!isRecord(message)) throw new Error(`protobuf message ${name} decoded to no object`);
  return message;
}

/** int64 arrives as a number or a Long, depending on whether protobufjs found the long package. */
function toNumber(v: unknown): number {
  return typeof v === 'number' ? v : Number(String(v));
}

/** Go's RFC3339 (Time, second precision) or RFC3339Micro (MicroTime); seconds=0 means unset. */
function timeString(m: Msg, micro: boolean): string | undefined {
  const t = { seconds: toNumber(m.seconds ?? 0), nanos: toNumber(m.nanos ?? 0) };
  if (t.seconds === 0 && t.nanos === 0) return undefined;
  return micro ? formatMicroTime(t) : formatTime(t);
}

function base64(v: unknown): string {
  return Buffer.from(v as Uint8Array).toString('base64');
}

/** JSON embedded as bytes (RawExtension, FieldsV1); an empty payload means unset. */
function embeddedJson(v: unknown): unknown {
  const bytes = Buffer.from((v ?? new Uint8Array()) as Uint8Array);
  return bytes.length === 0 ? undefined : (JSON.parse(bytes.toString('utf8')) as unknown);
}

function wrapper(name: string, m: Msg): unknown {
  switch (name) {
    case 'Time':
      return timeString(m, false);
    case 'MicroTime':
      return timeString(m, true);
    case 'Quantity':
      return m.string ?? '';
    case 'IntOrString':
      return toNumber(m.type ?? 0) === 1 ? (m.strVal ?? '') : toNumber(m.intVal ?? 0);
    case 'RawExtension':
      return embeddedJson(m.raw);
    case 'FieldsV1':
      return embeddedJson(m.Raw);
    case 'ExtraValue':
      return [...((m.items ?? []) as string[])];
    default:
      throw new Error(`no JSON mapping for ${name}`);
  }
}

function scalar(type: string, v: unknown): unknown {
  switch (type) {
    case 'string':
    case 'bool':
    case 'int32':
      return v;
    case 'int64':
      return toNumber(v);
    case 'bytes':
      return base64(v);
    default:
      return Object.hasOwn(WRAPPERS, type) ? wrapper(type, v as Msg) : toJson(type, v as Msg);
  }
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

/** The JSON object for a decoded message of the named type. */
export function toJson(name: string, m: Msg): Record<string, unknown> {
  const desc = ALL[name];
  if (!desc) throw new Error(`unknown message ${name}`);
  const out: Record<string, unknown> = {};
  for (const [field, [, type, flag]] of Object.entries(desc)) {
    const raw = m[field];
    if (flag === 'r') {
      const items = (raw ?? []) as unknown[];
      if (items.length > 0) out[field] = items.map((v) => scalar(type, v));
    } else if (flag === 'm') {
      const entries = Object.entries((raw ?? {}) as Record<string, unknown>);
      if (entries.length > 0) out[field] = Object.fromEntries(entries.map(([k, v]) => [k, scalar(type, v)]));
    } else if (Object.hasOwn(m, field)) {
      const v = scalar(type, raw);
      if (v === undefined || (flag !== 'p' && isZero(v))) continue;
      out[field] = v;
    }
  }
  return out;
}
