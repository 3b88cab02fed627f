/**
 * An EncryptionConfiguration as the stores' ValueTransformer: each resource gets the providers of
 * the rules that list it (an exact `resource.group` first, then `*.group`, then `*.*`, as
 * upstream); the first provider writes, every one of them reads (stale reads are not rewritten:
 * `kubectl replace` does that, as the rotation procedure says). Operations are counted and timed
 * in kube-apiserver's metrics.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { KeyTransformer, ValueTransformer } from '../storage/value-transformer.js';
import { StoreError } from '../storage/store.js';
import { groupResourceString, type EncryptionConfig, type GroupResource } from './config.js';
import type { Provider } from './providers.js';

export class TransformationMetrics {
  readonly operations: Counter<'transformation_type' | 'transformer_prefix' | 'status'>;
  readonly duration: Histogram<'transformation_type' | 'transformer_prefix'>;

  constructor(registry: Registry) {
    this.operations = new Counter({
      name: 'apiserver_storage_transformation_operations_total',
      help: "Total number of transformations. Successful transformation will have a status 'OK' and a varied status string when the transformation fails.",
      labelNames: ['transformation_type', 'transformer_prefix', 'status'],
      registers: [registry],
    });
    // Upstream's buckets: in-process ciphers take microseconds, a KMS plugin call up to seconds.
    this.duration = new Histogram({
      name: 'apiserver_storage_transformation_duration_seconds',
      help: 'Latencies in seconds of value transformation operations.',
      labelNames: ['transformation_type', 'transformer_prefix'],
      buckets: Array.from({ length: 25 }, (_, i) => 5e-6 * 2 ** i),
      registers: [registry],
    });
  }

  record(type: 'to_storage' | 'from_storage', prefix: string, startNs: bigint, err?: unknown): void {
    const seconds = Number(process.hrtime.bigint() - startNs) / 1e9;
    this.operations.inc({ transformation_type: type, transformer_prefix: prefix, status: statusOf(err) });
    // Only successes are timed, as upstream: a failure's time says nothing about the cipher.
    if (err === undefined) this.duration.observe({ transformation_type: type, transformer_prefix: prefix }, seconds);
  }
}

/** gRPC's code names, as upstream's status label (a KMS plugin that is down is Unavailable). */
function statusOf(err: unknown): string {
  if (err === undefined) return 'OK';
  return err instanceof StoreError && err.code === 'Unavailable' ? 'Unavailable' : 'Unknown';
}

/** The providers of one resource, in the order the configuration lists them. */
export class ProviderChain implements KeyTransformer {
  constructor(
    readonly providers: Provider[],
    private readonly metrics: TransformationMetrics,
  ) {}

  toStorage(data: Uint8Array, authenticatedData: string): Uint8Array {
    const writer = this.providers[0]!;
    const start = process.hrtime.bigint();
    try {
      const out = writer.seal(data, authenticatedData);
      this.metrics.record('to_storage', writer.label, start);
      return out;
    } catch (err) {
      this.metrics.record('to_storage', writer.label, start, err);
      throw err;
    }
  }

  isStale(data: Uint8Array): boolean {
    return !this.providers[0]!.isCurrent(data);
  }

  fromStorage(data: Uint8Array, authenticatedData: string): Uint8Array | Promise<Uint8Array> {
    const start = process.hrtime.bigint();
    const errors: unknown[] = [];
    for (const provider of this.providers) {
      let out;
      try {
        out = provider.open(data, authenticatedData);
      } catch (err) {
        // Another provider of the same type (other keys) may still read it, as upstream tries on.
        this.metrics.record('from_storage', provider.label, start, err);
        errors.push(err);
        continue;
      }
      if (out === undefined) continue;
      if (out instanceof Uint8Array) {
        this.metrics.record('from_storage', provider.label, start);
        return out;
      }
      return out.then(
        (plain) => (this.metrics.record('from_storage', provider.label, start), plain),
        (err: unknown) => {
          this.metrics.record('from_storage', provider.label, start, err);
          throw err;
        },
      );
    }
    // A KMS plugin that is down makes the value unreadable for now, not for good: say so (503).
    const unavailable = errors.find((e) => e instanceof StoreError && e.code === 'Unavailable');
    if (unavailable) throw unavailable;
    if (errors.length > 0) throw new Error(`failed to decrypt stored data: ${errors.map((e) => (e as Error).message).join('; ')}`);
    this.metrics.record('from_storage', 'unknown', start, new Error('no matching prefix found'));
    throw new Error('no matching prefix found: the stored value was written by a provider the encryption configuration no longer lists');
  }
}

/** The group and resource of a Store key `/registry/<group or core>/<plural>/...`; undefined for a shorter prefix. */
function groupResourceOf(key: string): GroupResource | undefined {
  const parts = key.split('/');
  if (parts[1] !== 'registry' || parts[2] === undefined || parts[3] === undefined || parts[3] === '') return undefined;
  return { group: parts[2] === 'core' ? '' : parts[2], resource: parts[3] };
}

export class ResourceTransformers implements ValueTransformer {
  /** Chains by rule key (see ruleKey). */
  private readonly rules = new Map<string, ProviderChain>();
  /** Chains by `/registry/<group>/<resource>` prefix, as looked up (null: none). */
  private readonly byPrefix = new Map<string, ProviderChain | null>();

  constructor(
    config: EncryptionConfig,
    providersOf: (rule: number) => Provider[],
    metrics: TransformationMetrics,
  ) {
    config.rules.forEach((rule, i) => {
      const chain = new ProviderChain(providersOf(i), metrics);
      for (const gr of rule.resources) {
        const name = ruleKey(gr);
        for (const mask of [ruleKey({ group: gr.group, resource: '*' }), '*.*']) {
          if (mask !== name && this.rules.has(mask)) throw new Error(`resource "${groupResourceString(gr)}" is masked by earlier rule "${mask}"`);
        }
        // A resource listed again later reads with that rule's providers too.
        const earlier = this.rules.get(name);
        this.rules.set(name, earlier ? new ProviderChain([...earlier.providers, ...chain.providers], metrics) : chain);
      }
    });
  }

  /** On every write of every resource (a CSR's too): one substring and one map lookup once seen. */
  forKey(key: string): KeyTransformer | undefined {
    // `/registry/<group>/<resource>`: the end of the fourth segment.
    const groupEnd = key.indexOf('/', REGISTRY.length);
    const resourceEnd = groupEnd < 0 ? -1 : key.indexOf('/', groupEnd + 1);
    const prefix = resourceEnd < 0 ? key : key.slice(0, resourceEnd);
    const seen = this.byPrefix.get(prefix);
    if (seen !== undefined) return seen ?? undefined;
    const gr = groupResourceOf(key);
    const found = gr && (this.rules.get(ruleKey(gr)) ?? this.rules.get(ruleKey({ group: gr.group, resource: '*' })) ?? this.rules.get('*.*'));
    // Only whole resource prefixes are kept: the keys of a store name a bounded set of them.
    if (gr && resourceEnd >= 0) this.byPrefix.set(prefix, found ?? null);
    return found;
  }
}

const REGISTRY = '/registry/';

/** `secrets.` for core Secrets, `*.` for every core resource, `*.apps`, `*.*`: one spelling per rule. */
function ruleKey(gr: GroupResource): string {
  return `${gr.resource}.${gr.group}`;
}
