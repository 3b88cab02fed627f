/**
 * A signer's CA read from files, tolerant of files that are not there yet: kube-controller-manager
 * refuses to start without them, but a missing or unreadable CA is a transient condition for us
 * (a Secret not mounted yet, a rotation in progress), so signing is retried until the files load.
 * Once loaded, CaFileProvider reloads on change and keeps the last good pair.
 */
import { CaFileProvider, type CaReloadEvent, type CaSigner, type CaSignerSource } from '../../pki/ca.js';
import { PkiError } from '../../pki/errors.js';

export interface CaFiles {
  certFile: string;
  keyFile: string;
}

export class CaSource implements CaSignerSource {
  private provider: CaFileProvider | undefined;

  constructor(
    readonly files: CaFiles,
    private readonly onReload?: (event: CaReloadEvent) => void,
    private readonly now?: () => number,
  ) {}

  /** The current CA; throws a PkiError while the files cannot be loaded (callers retry). */
  signer(): CaSigner {
    this.provider ??= this.load();
    return this.provider.signer();
  }

  private load(): CaFileProvider {
    try {
      return new CaFileProvider({ ...this.files, onReload: this.onReload, now: this.now });
    } catch (err) {
      throw err instanceof PkiError ? err : new PkiError((err as Error).message, 'ca');
    }
  }
}
