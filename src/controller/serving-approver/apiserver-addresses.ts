/**
 * The API server's in-cluster addresses: the `kubernetes` Service's cluster IPs and the addresses
 * of its Endpoints (the API servers' own host IPs). A node may put any of them in its own Node's
 * status and ask for a serving certificate naming it, so the serving policy refuses them.
 *
 * Read with two GETs, kept for a few seconds, rather than informers: an API server that does not
 * serve Endpoints (the embedded one) must not hold up the serving approver, and the two objects
 * change about never. A read that fails keeps the last good answer; a missing object or resource
 * contributes nothing (the Service range still covers the Service's own IP).
 */
import type { V1Endpoints, V1Service } from '@kubernetes/client-node';
import type { Clock } from '../../lib/clock.js';
import { formatIp, parseIp } from '../../pki/san.js';
import { isNotFound } from '../../lib/api-errors.js';
import type { KubeClient } from '../client/kube-client.js';

const SERVICE_PATH = '/api/v1/namespaces/default/services/kubernetes';
const ENDPOINTS_PATH = '/api/v1/namespaces/default/endpoints/kubernetes';
const FRESH_MS = 10_000;

function canonical(ip: string): string | undefined {
  try {
    return formatIp(parseIp(ip));
  } catch {
    return undefined;
  }
}

/** The IPs in a Service (spec.clusterIP, spec.clusterIPs) and in Endpoints (subsets[].addresses[].ip). */
export function apiserverIpsOf(service: V1Service | undefined, endpoints: V1Endpoints | undefined): Set<string> {
  const ips = [service?.spec?.clusterIP ?? '', ...(service?.spec?.clusterIPs ?? [])];
  for (const subset of endpoints?.subsets ?? []) {
    for (const a of [...(subset.addresses ?? []), ...(subset.notReadyAddresses ?? [])]) ips.push(a.ip);
  }
  return new Set(ips.map(canonical).filter((ip): ip is string => ip !== undefined));
}

export class ApiserverAddresses {
  private last: { ips: Set<string>; at: number } | undefined;
  private inflight: Promise<ReadonlySet<string>> | undefined;

  constructor(
    private readonly client: Pick<KubeClient, 'requestJSON'>,
    private readonly clock: Clock,
  ) {}

  /** The current addresses (read again when older than 10 s). */
  current(): Promise<ReadonlySet<string>> {
    const last = this.last;
    if (last && this.clock.now() - last.at < FRESH_MS) return Promise.resolve(last.ips);
    this.inflight ??= this.read().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async read(): Promise<ReadonlySet<string>> {
    // Raw JSON read as client-node's models: these fields are strings on the wire and in the model.
    const get = <T>(path: string): Promise<T | undefined> =>
      this.client.requestJSON<T>('GET', path).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
    try {
      const [service, endpoints] = await Promise.all([get<V1Service>(SERVICE_PATH), get<V1Endpoints>(ENDPOINTS_PATH)]);
      this.last = { ips: apiserverIpsOf(service, endpoints), at: this.clock.now() };
      return this.last.ips;
    } catch (err) {
      // Keep deciding on the last good answer; with none, the reconcile fails and is retried.
      if (this.last) return this.last.ips;
      throw err;
    }
  }
}
