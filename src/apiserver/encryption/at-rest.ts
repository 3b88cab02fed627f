/**
 * Encryption at rest as `--encryption-provider-config` and
 * `--encryption-provider-config-automatic-reload` set it up: the stores' ValueTransformer built
 * from the file, the KMS v2 plugins it names (their Status polls, and the `kms-providers` health
 * check), and, with automatic reload, a new configuration taken when the file changes — once its
 * KMS plugins answer healthy, as upstream; a file that does not load keeps the running one.
 */
import { createHash } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../../log/logger.js';
import type { KeyTransformer, ValueTransformer } from '../storage/value-transformer.js';
import { groupResourceString, parseEncryptionConfig, type EncryptionConfig, type ProviderConfig } from './config.js';
import type { KmsTimings, KmsV2Provider } from './kms-envelope.js';
import type { KmsMetrics } from './kms-metrics.js';
import { identityProvider, keyedProvider, type Provider } from './providers.js';
import { ResourceTransformers, TransformationMetrics } from './transformers.js';

export interface EncryptionAtRestOptions {
  /** The EncryptionConfiguration file. */
  file: string;
  /** --encryption-provider-config-automatic-reload. */
  automaticReload?: boolean;
  registry: Registry;
  logger: Logger;
  /** KMS v2 poll intervals and lifetimes (upstream's by default; tests shorten them). */
  kmsTimings?: KmsTimings;
  /** How often the file is checked for changes with automatic reload (default 2 s). */
  reloadCheckMs?: number;
}

/** One loaded configuration: its transformers and the KMS plugins they use. */
interface Loaded {
  config: EncryptionConfig;
  hash: string;
  transformers: ResourceTransformers;
  kms: KmsV2Provider[];
}

/** Old KMS clients stay open this long after a reload, for the reads that started before it. */
const RELOAD_GRACE_MS = 30_000;

export class EncryptionAtRest implements ValueTransformer {
  private readonly metrics: TransformationMetrics;
  private readonly reloads: Counter<'status'>;
  private readonly reloadTime: Gauge<'status'>;
  private current!: Loaded;
  private kmsMetrics: KmsMetrics | undefined;
  private reloading = false;
  private readonly retired = new Set<NodeJS.Timeout>();
  private closed = false;

  private constructor(private readonly opts: EncryptionAtRestOptions) {
    this.metrics = new TransformationMetrics(opts.registry);
    this.reloads = new Counter({
      name: 'apiserver_encryption_config_controller_automatic_reloads_total',
      help: 'Total number of reload successes and failures of encryption configuration.',
      labelNames: ['status'],
      registers: [opts.registry],
    });
    this.reloadTime = new Gauge({
      name: 'apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds',
      help: 'Timestamp of the last successful or failed automatic reload of encryption configuration.',
      labelNames: ['status'],
      registers: [opts.registry],
    });
  }

  /** Loads the file (EncryptionConfigError when it is wrong) and connects its KMS plugins. */
  static async start(opts: EncryptionAtRestOptions): Promise<EncryptionAtRest> {
    const at = new EncryptionAtRest(opts);
    const text = readFileSync(opts.file, 'utf8');
    at.current = await at.build(parseEncryptionConfig(text, opts.file), hashOf(text));
    if (opts.automaticReload) watchFile(opts.file, { interval: opts.reloadCheckMs ?? 2000, persistent: false }, () => void at.reload());
    return at;
  }

  forKey(key: string): KeyTransformer | undefined {
    return this.current.transformers.forKey(key);
  }

  /** Each rule as `secrets: secretbox, identity` (for logs and `up`'s banner; never a key). */
  describe(): string[] {
    const provider = (p: ProviderConfig): string => (p.type === 'kms' ? `kms ${p.kms.name}` : p.type);
    return this.current.config.rules.map((r) => `${r.resources.map(groupResourceString).join(', ')}: ${r.providers.map(provider).join(', ')}`);
  }

  /** `kms-providers` (upstream's name) when KMS plugins are configured, or always with automatic reload. */
  healthChecks(): { name: string; check(): Promise<void> }[] {
    if (!this.opts.automaticReload && this.current.kms.length === 0) return [];
    return [
      {
        name: 'kms-providers',
        check: async () => {
          for (const kms of this.current.kms) {
            await kms.healthy().catch((err: unknown) => {
              throw new Error(`failed to perform status section of the healthz check for KMS Provider ${kms.name}, error: ${(err as Error).message}`);
            });
          }
        },
      },
    ];
  }

  close(): void {
    this.closed = true;
    unwatchFile(this.opts.file);
    for (const timer of this.retired) clearTimeout(timer);
    for (const kms of this.current.kms) kms.close();
  }

  private async build(config: EncryptionConfig, hash: string): Promise<Loaded> {
    const kms: KmsV2Provider[] = [];
    // The KMS client's modules (gRPC, protobuf) only for a configuration that names a plugin: about
    // 100 ms of CPU at every start of a server that has none.
    const kmsModules = config.rules.some((rule) => rule.providers.some((p) => p.type === 'kms'))
      ? await Promise.all([import('./kms-envelope.js'), import('./kms-metrics.js'), import('./kms-service.js')])
      : undefined;
    const make = (p: ProviderConfig): Provider => {
      if (p.type === 'identity') return identityProvider;
      if (p.type !== 'kms') return keyedProvider(p.type, p.keys);
      const [{ KMS_TIMINGS, KmsV2Provider }, { KmsMetrics }, { connectKms }] = kmsModules!;
      // Registered with the first KMS provider, as upstream's; a reload keeps the same series.
      const metrics = (this.kmsMetrics ??= new KmsMetrics(this.opts.registry));
      const { name, endpoint, timeoutMs } = p.kms;
      const service = connectKms(name, endpoint, timeoutMs, (method, seconds, code) => metrics.call(name, method, seconds, code));
      const provider = new KmsV2Provider(name, service, this.opts.logger, this.opts.kmsTimings ?? KMS_TIMINGS, metrics);
      kms.push(provider);
      return provider;
    };
    try {
      const providers = config.rules.map((rule) => rule.providers.map(make));
      const transformers = new ResourceTransformers(config, (i) => providers[i]!, this.metrics);
      // The first Status poll, so a healthy plugin has its seed before the first write; a plugin
      // that is down does not keep the server from starting (writes and /readyz say so meanwhile).
      await Promise.all(kms.map((k) => k.start()));
      return { config, hash, transformers, kms };
    } catch (err) {
      for (const k of kms) k.close();
      throw err;
    }
  }

  private async reload(): Promise<void> {
    if (this.reloading || this.closed) return;
    this.reloading = true;
    try {
      let text: string;
      try {
        text = readFileSync(this.opts.file, 'utf8');
      } catch {
        return; // Being replaced: the next check sees the new file.
      }
      const hash = hashOf(text);
      if (hash === this.current.hash) return;
      // A file that does not parse, or whose providers cannot be built, keeps the running configuration.
      const next = await Promise.resolve()
        .then(() => this.build(parseEncryptionConfig(text, this.opts.file), hash))
        .catch((err: unknown) => {
          this.failedReload(err);
          return undefined;
        });
      if (!next) return;
      const unhealthy = await Promise.all(next.kms.map((k) => k.healthy().then(() => undefined, (err: unknown) => err)));
      const err = unhealthy.find((e) => e !== undefined);
      if (err !== undefined || this.closed) {
        for (const k of next.kms) k.close();
        if (err !== undefined) this.failedReload(err);
        return;
      }
      const previous = this.current;
      this.current = next;
      const timer = setTimeout(() => {
        this.retired.delete(timer);
        for (const k of previous.kms) k.close();
      }, RELOAD_GRACE_MS);
      timer.unref();
      this.retired.add(timer);
      this.reloads.inc({ status: 'success' });
      this.reloadTime.set({ status: 'success' }, Date.now() / 1000);
      this.opts.logger.info({ file: this.opts.file }, 'loaded new encryption provider configuration');
    } finally {
      this.reloading = false;
    }
  }

  private failedReload(err: unknown): void {
    this.reloads.inc({ status: 'failure' });
    this.reloadTime.set({ status: 'failure' }, Date.now() / 1000);
    this.opts.logger.error({ file: this.opts.file, err: (err as Error).message }, 'encryption provider configuration not reloaded; the running one stays');
  }
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
