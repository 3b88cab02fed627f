/**
 * A signer's CA read from files, tolerant of files that are not there yet: kube-controller-manager
 * refuses to start without them, but a missing or unreadable CA is a transient condition for us
 * (a Secret not mounted yet, a rotation in progress), so signing is retried until the files load.
 * Once loaded, CaFileProvider reloads on change and keeps the last good pair. The files are looked
 * at (two stats) at most once a second, not per certificate signed: a rotation is in use within a
 * second (upstream's file watch plus one-minute poll is no faster in the worst case).
 */
import { CaFileProvider, type CaReloadEvent, type CaSigner, type CaSignerSource } from '../../pki/ca.js';
import { PkiError } from '../../pki/errors.js';

export interface CaFiles {
  certFile: string;
  keyFile: string;
}

/** How long a good CA is used before the files are looked at again. */
const RECHECK_MS = 1000;

export class CaSource implements CaSignerSource {
  private provider: CaFileProvider | undefined;
  private current: { signer: CaSigner; at: number } | undefined;

  constructor(
    readonly files: CaFiles,
    private readonly onReload?: (event: CaReloadEvent) => void,
    private readonly now?: () => number,
  ) {}

  /** The current CA; throws a PkiError while the files cannot be loaded (callers retry). */
  signer(): CaSigner {
    const now = (this.now ?? Date.now)();
    const cur = this.current;
    if (cur && now - cur.at < RECHECK_MS && now >= cur.at) return cur.signer;
    this.provider ??= this.load();
    const signer = this.provider.signer();
    this.current = { signer, at: now };
    return signer;
  }

  private load(): CaFileProvider {
    try {
      return new CaFileProvider({ ...this.files, onReload: this.onReload, now: this.now });
    } catch (err) {
      throw err instanceof PkiError ? err : new PkiError((err as Error).message, 'ca');
    }
  }
}
