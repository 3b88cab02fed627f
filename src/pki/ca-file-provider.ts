import fs from 'node:fs';
import { certificateDers } from './certificate.js';
import { PkiError } from './errors.js';
import { prepareCaSigner, type CaSigner, type CaSignerSource } from './signer.js';

export interface CaFileProviderOptions {
  certFile: string;
  keyFile: string;
  /** Told about every reload attempt after the first load (inject logging/metrics here). */
  onReload?: (event: CaReloadEvent) => void;
  /** Re-read the files this often even if stat shows no change (default 60s, as upstream's resync). */
  resyncMs?: number;
  /** Clock in ms, for tests. */
  now?: () => number;
}

export interface CaReloadEvent {
  ok: boolean;
  /** Why the new files were not taken into use. */
  error?: PkiError;
}

interface Loaded {
  certPem: string;
  keyPem: string;
  /** The prepared signer, or why this (otherwise valid) pair cannot sign. */
  result: CaSigner | PkiError;
}

/**
 * A CA read from a cert file and a key file, re-read when they change, like kube-controller-manager's
 * csr-controller CA loader. Each `signer()` call stats both files (cheap) and reloads on any change
 * (and at least once a minute, in case a rewrite kept size and timestamps):
 * a new pair that fails to load or does not match is ignored and the previous CA stays in use; a
 * matching pair that cannot serve as a CA (e.g. several certificates) makes signing fail until fixed.
 */
export class CaFileProvider implements CaSignerSource {
  readonly name: string;
  private loaded: Loaded;
  private stamp: string;
  private readAt: number;
  private readonly now: () => number;
  private readonly onReload: ((event: CaReloadEvent) => void) | undefined;

  constructor(private readonly opts: CaFileProviderOptions) {
    if (!opts.certFile || !opts.keyFile) throw new PkiError('missing filename for serving cert', 'ca');
    this.name = `csr-controller::${opts.certFile}::${opts.keyFile}`;
    this.onReload = opts.onReload;
    this.now = opts.now ?? Date.now;
    this.readAt = this.now();
    this.stamp = this.statStamp() ?? '';
    try {
      this.loaded = this.load();
    } catch (err) {
      throw new PkiError(`error reading CA cert file "${opts.certFile}": ${(err as Error).message}`, 'ca');
    }
  }

  /** The current signer, reloading first if either file changed. Throws while the CA is unusable. */
  signer(): CaSigner {
    this.reloadIfChanged();
    if (this.loaded.result instanceof PkiError) throw this.loaded.result;
    return this.loaded.result;
  }

  private reloadIfChanged(): void {
    const stamp = this.statStamp();
    if (stamp === undefined) return; // a file missing mid-rotation: retry on next use
    const due = this.now() - this.readAt >= (this.opts.resyncMs ?? 60_000);
    if (stamp === this.stamp && !due) return;
    this.stamp = stamp;
    this.readAt = this.now();
    let next: Loaded;
    try {
      next = this.load();
    } catch (err) {
      this.onReload?.({ ok: false, error: err as PkiError });
      return;
    }
    if (next.certPem === this.loaded.certPem && next.keyPem === this.loaded.keyPem) return;
    this.loaded = next;
    this.onReload?.(next.result instanceof PkiError ? { ok: false, error: next.result } : { ok: true });
  }

  /** Identity of both files' current versions; undefined when either cannot be stat'ed. */
  private statStamp(): string | undefined {
    try {
      return [this.opts.certFile, this.opts.keyFile]
        .map((f) => {
          const s = fs.statSync(f, { bigint: true });
          return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
        })
        .join('|');
    } catch {
      return undefined;
    }
  }

  /** Reads and checks the pair; throws (load-level failure) when the files do not form a valid pair. */
  private load(): Loaded {
    const read = (f: string): string => {
      const text = fs.readFileSync(f, 'utf8');
      if (text.length === 0) throw new PkiError(`missing content for serving cert "${this.name}"`, 'ca');
      return text;
    };
    const certPem = read(this.opts.certFile);
    const keyPem = read(this.opts.keyFile);
    const signer = prepareCaSigner({ certPem, keyPem });
    const count = certificateDers(certPem).length;
    const result =
      count === 1
        ? signer
        : new PkiError(`error reading CA cert file "${this.name}": expected 1 certificate, found ${count}`, 'ca');
    return { certPem, keyPem, result };
  }
}
