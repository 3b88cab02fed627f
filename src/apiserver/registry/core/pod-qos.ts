/**
 * A new pod's status.qosClass, as upstream's pod strategy sets it on create (ComputePodQOS): from the
 * pod-level resources when given, else from each init and app container's. Per resource (cpu and
 * memory only), a request equal to its non-zero limit is Guaranteed, both zero BestEffort, anything
 * else Burstable (requests were defaulted from limits); one class throughout is the pod's, a mix is
 * Burstable. Resources are free-form here: a value that is no quantity counts as a mismatch.
 */
import { isRecord } from '../../../lib/json.js';
import type { Pod } from '../../../api/pods.js';

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'];

/** A quantity's value, exactly: digits × 2^binary × 10^decimal. */
interface Exact {
  digits: bigint;
  binary: number;
  decimal: number;
}

const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:([KMGTPE])i|([numkMGTPE])|[eE]([+-]?\d{1,4}))?$/;
const BINARY: Readonly<Record<string, number>> = { K: 10, M: 20, G: 30, T: 40, P: 50, E: 60 };
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** resource.Quantity's value of `v` (absent: zero), or undefined when it is no quantity. */
function quantity(v: unknown): Exact | undefined {
  if (v === undefined || v === null) return { digits: 0n, binary: 0, decimal: 0 };
  return typeof v === 'number' || typeof v === 'string' ? parseQuantity(String(v)) : undefined;
}

function parseQuantity(text: string): Exact | undefined {
  const m = QUANTITY.exec(text);
  if (!m) return undefined;
  const [, sign, whole = '', fraction = '', binary = '', decimal = '', exponent = '0'] = m;
  if (whole + fraction === '') return undefined;
  const digits = BigInt(whole + fraction) * (sign === '-' ? -1n : 1n);
  const scale = decimal in DECIMAL ? (DECIMAL[decimal] ?? 0) : Number(exponent);
  return { digits, binary: BINARY[binary] ?? 0, decimal: scale - fraction.length };
}

function equal(a: Exact, b: Exact): boolean {
  if (a.digits === 0n || b.digits === 0n) return a.digits === b.digits;
  const binary = Math.min(a.binary, b.binary);
  const decimal = Math.min(a.decimal, b.decimal);
  const scaled = (x: Exact): bigint => x.digits * 2n ** BigInt(x.binary - binary) * 10n ** BigInt(x.decimal - decimal);
  return scaled(a) === scaled(b);
}

/** One set of requirements' class (upstream's requirementsQOS). */
function requirementsQos(resources: unknown): QosClass {
  const requests = isRecord(resources) && isRecord(resources.requests) ? resources.requests : {};
  const limits = isRecord(resources) && isRecord(resources.limits) ? resources.limits : {};
  if (Object.keys(requests).length === 0 && Object.keys(limits).length === 0) return 'BestEffort';
  const classes = QOS_RESOURCES.map((name): QosClass => {
    const request = quantity(requests[name]);
    const limit = quantity(limits[name]);
    if (!request || !limit || !equal(request, limit)) return 'Burstable';
    return request.digits === 0n ? 'BestEffort' : 'Guaranteed';
  });
  return classes.every((c) => c === classes[0]) ? (classes[0] ?? 'BestEffort') : 'Burstable';
}

export function podQosClass(pod: Pod): QosClass {
  const spec = pod.spec ?? {};
  if (isRecord(spec.resources)) return requirementsQos(spec.resources);
  const classes = [...(spec.initContainers ?? []), ...(spec.containers ?? [])].map((c) => requirementsQos(c.resources));
  if (classes.length === 0) return 'BestEffort';
  return classes.every((c) => c === classes[0]) ? (classes[0] ?? 'BestEffort') : 'Burstable';
}
