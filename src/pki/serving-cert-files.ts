/**
 * A serving certificate and key read from files and re-read when they change, as kube-apiserver's
 * dynamic serving certificate (`--tls-cert-file`/`--tls-private-key-file`) and controller-runtime's
 * certwatcher do: the files are watched, again on whatever the path names after each event (a
 * Secret volume swaps a symlink, an operator renames a new file into place), with a resync every
 * minute in case an event was missed. A new pair is taken only when it loads and its key matches;
 * otherwise the previous one keeps serving.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { tlsContextOptions, type TlsSettings } from './tls-options.js';

export interface ServingPair {
  certPem: string;
  keyPem: string;
}

export interface ServingCertFilesOptions {
  certFile: string;
  keyFile: string;
  /** A new valid pair is in the files (not called for the first load). */
  onChange: (pair: ServingPair) => void;
  /** The files changed but do not form a usable pair; the previous one stays. */
  onError: (err: Error) => void;
  /** Default 60 s, upstream's resync. */
  resyncMs?: number;
}

const readPair = (certFile: string, keyFile: string): ServingPair => ({ certPem: fs.readFileSync(certFile, 'utf8'), keyPem: fs.readFileSync(keyFile, 'utf8') });

/** Throws unless both are non-empty and the key matches the certificate. */
function checkPair({ certPem, keyPem }: ServingPair, certFile: string, keyFile: string): void {
  if (certPem.trim() === '' || keyPem.trim() === '') throw new Error(`empty serving certificate or key (${certFile}, ${keyFile})`);
  // OpenSSL takes an EC certificate with an RSA key (one slot each) and then fails every handshake.
  if (!new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem))) throw new Error(`the key in ${keyFile} does not match the certificate in ${certFile}`);
  createSecureContext({ cert: certPem, key: keyPem });
}

/** Reads and checks a pair: both files non-empty, the key matching the certificate. */
export function readServingPair(certFile: string, keyFile: string): ServingPair {
  const pair = readPair(certFile, keyFile);
  checkPair(pair, certFile, keyFile);
  return pair;
}

export class ServingCertFiles {
  private pair: ServingPair;
  /** The watch on each file of the pair (absent while the path does not resolve to a file). */
  private readonly watchers = new Map<string, fs.FSWatcher | undefined>();
  private readonly resync: NodeJS.Timeout;
  private pending: NodeJS.Timeout | undefined;

  /** Loads the pair (throws when it is not usable) and starts watching. */
  constructor(private readonly opts: ServingCertFilesOptions) {
    this.pair = readServingPair(opts.certFile, opts.keyFile);
    for (const file of new Set([opts.certFile, opts.keyFile])) this.watch(file);
    this.resync = setInterval(() => this.check(), opts.resyncMs ?? 60_000).unref();
  }

  current(): ServingPair {
    return this.pair;
  }

  stop(): void {
    for (const w of this.watchers.values()) w?.close();
    this.watchers.clear();
    clearInterval(this.resync);
    clearTimeout(this.pending);
  }

  /**
   * Watches the file the path names now, as kube-apiserver's dynamic serving certificate watches its
   * files (a watch on their directory woke on every write of the store and the audit log that up
   * keeps beside the pair: about 3% of the API server's main thread under creates, one inotify event
   * per SQLite WAL write). The path is followed to the file it names, so a file replaced under it (a
   * new file renamed into place, a Secret volume swapping its `..data` link to a new directory and
   * deleting the old one) ends that watch: any event arms a watch on the path again, on what it
   * names by then. A path that names nothing is watched again at the next check (the settle after
   * an event, or the minute's resync).
   */
  private watch(file: string): void {
    this.watchers.get(file)?.close();
    let watcher: fs.FSWatcher | undefined;
    try {
      watcher = fs.watch(file, { persistent: false }, () => {
        this.schedule();
        this.watch(file);
      });
      // A watch that failed is armed again at the next check.
      watcher.on('error', () => {
        if (this.watchers.get(file) === watcher) this.watchers.set(file, undefined);
      });
    } catch {
      watcher = undefined; // not there (yet): the next check tries again
    }
    this.watchers.set(file, watcher);
  }

  /** Events come in bursts while files are written: read once they settle. */
  private schedule(): void {
    clearTimeout(this.pending);
    this.pending = setTimeout(() => this.check(), 100).unref();
  }

  private check(): void {
    for (const [file, watcher] of this.watchers) if (!watcher) this.watch(file);
    let next: ServingPair;
    try {
      next = readPair(this.opts.certFile, this.opts.keyFile);
      // Events that change nothing still come (a `..data` swap to the same content, a write of the
      // same bytes): the pair in use was checked already, and parsing it and building a context again is costly.
      if (next.certPem === this.pair.certPem && next.keyPem === this.pair.keyPem) return;
      checkPair(next, this.opts.certFile, this.opts.keyFile);
    } catch (err) {
      this.opts.onError(err as Error);
      return;
    }
    this.pair = next;
    this.opts.onChange(next);
  }
}

export interface ServingTlsOptions extends Partial<TlsSettings> {
  /** A fixed pair; or */
  certPem?: string;
  keyPem?: string;
  /** files re-read when they change (these win). */
  certFile?: string;
  keyFile?: string;
  /** CAs of the client certificates to request (the API server's client CA). */
  clientCaPem?: string;
}

/** The secure context of a serving endpoint, kept current with its certificate files. */
export interface ServingTls {
  /** Options for `https.createServer` (and each `setSecureContext`). */
  contextOptions(): SecureContextOptions;
  /** Gives `server` (a TLS server, or the server's TLS fronts) each new pair from now on. */
  attach(server: { setSecureContext(options: SecureContextOptions): void }, onError: (err: Error) => void): void;
  stop(): void;
}

export function servingTls(o: ServingTlsOptions): ServingTls {
  const settings: TlsSettings = { minVersion: o.minVersion ?? 'VersionTLS12', cipherSuites: o.cipherSuites ?? [] };
  const options = (pair: ServingPair): SecureContextOptions => ({ cert: pair.certPem, key: pair.keyPem, ca: o.clientCaPem, ...tlsContextOptions(settings) });
  let files: ServingCertFiles | undefined;
  let initial: ServingPair;
  if (o.certFile && o.keyFile) initial = readServingPair(o.certFile, o.keyFile);
  else if (o.certPem && o.keyPem) initial = { certPem: o.certPem, keyPem: o.keyPem };
  else throw new Error('a serving certificate needs a pair or both files');
  return {
    contextOptions: () => options(files?.current() ?? initial),
    attach(server, onError) {
      if (!o.certFile || !o.keyFile || files) return;
      files = new ServingCertFiles({ certFile: o.certFile, keyFile: o.keyFile, onChange: (pair) => server.setSecureContext(options(pair)), onError });
      // Replaced between the first read and now: serve the newer pair at once.
      if (files.current().certPem !== initial.certPem || files.current().keyPem !== initial.keyPem) server.setSecureContext(options(files.current()));
    },
    stop: () => files?.stop(),
  };
}
