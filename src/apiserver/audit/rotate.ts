/**
 * An append-only file that rotates as lumberjack (kube-apiserver's log writer) does: before a
 * write would take the file past maxSize megabytes it is renamed to `<name>-<UTC timestamp>.<ext>`
 * (timestamp `2006-01-02T15-04-05.000`) and a new one started with the same mode; then backups past
 * maxBackups (0 keeps all) or older than maxAge days (0 keeps all) are removed, and with compress
 * the others gzipped. Writes are synchronous: the blocking mode's promise is that the event is in
 * the file when the request goes on.
 */
import { closeSync, chmodSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const MEGABYTE = 1024 * 1024;
/** lumberjack's size when none is given. */
const DEFAULT_MAX_SIZE_MB = 100;

export interface RotatingFileOptions {
  filename: string;
  /** Megabytes; 0 means lumberjack's default, 100. */
  maxSizeMb: number;
  maxBackups: number;
  maxAgeDays: number;
  compress?: boolean;
  now?: () => Date;
}

/** `2006-01-02T15-04-05.000` in UTC. */
function backupTimestamp(d: Date): string {
  return d.toISOString().replace(/:/g, '-').replace(/Z$/, '');
}

function parseBackupTimestamp(s: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(s);
  if (!m) return undefined;
  const t = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
  return Number.isNaN(t) ? undefined : t;
}

export class RotatingFile {
  private fd: number | undefined;
  private size = 0;
  private readonly max: number;
  private readonly dir: string;
  private readonly prefix: string;
  private readonly ext: string;
  private readonly now: () => Date;

  constructor(private readonly opts: RotatingFileOptions) {
    this.max = (opts.maxSizeMb > 0 ? opts.maxSizeMb : DEFAULT_MAX_SIZE_MB) * MEGABYTE;
    this.dir = path.dirname(opts.filename);
    this.ext = path.extname(opts.filename);
    this.prefix = `${path.basename(opts.filename, this.ext)}-`;
    this.now = opts.now ?? (() => new Date());
  }

  /** Creates the file (directory 0700, file 0600) so a bad path is found at start, as upstream's ensureLogFile does. */
  open(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.openExistingOrNew(0);
  }

  write(data: Buffer): void {
    if (data.length > this.max) throw new Error(`write length ${data.length} exceeds maximum file size ${this.max}`);
    if (this.fd === undefined) this.openExistingOrNew(data.length);
    else if (this.size + data.length > this.max) this.rotate();
    let off = 0;
    while (off < data.length) off += writeSync(this.fd as number, data, off);
    this.size += data.length;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private openExistingOrNew(writeLen: number): void {
    let size: number;
    try {
      size = statSync(this.opts.filename).size;
    } catch {
      this.openNew();
      return;
    }
    if (size + writeLen >= this.max) {
      this.rotate();
      return;
    }
    this.fd = openSync(this.opts.filename, 'a', 0o600);
    this.size = size;
  }

  private rotate(): void {
    this.close();
    this.openNew();
    this.mill();
  }

  /** Moves the current file aside (if any) and starts an empty one with its mode. */
  private openNew(): void {
    let mode = 0o600;
    try {
      mode = statSync(this.opts.filename).mode & 0o777;
      renameSync(this.opts.filename, path.join(this.dir, `${this.prefix}${backupTimestamp(this.now())}${this.ext}`));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    this.fd = openSync(this.opts.filename, 'w', mode);
    chmodSync(this.opts.filename, mode);
    this.size = 0;
  }

  /** Backups newest first, by the timestamp in their names. */
  private backups(): { name: string; time: number }[] {
    const out: { name: string; time: number }[] = [];
    for (const name of readdirSync(this.dir)) {
      if (!name.startsWith(this.prefix)) continue;
      const rest = name.slice(this.prefix.length);
      const stamp = rest.endsWith(`${this.ext}.gz`) ? rest.slice(0, -(this.ext.length + 3)) : rest.endsWith(this.ext) ? rest.slice(0, rest.length - this.ext.length) : undefined;
      const time = stamp === undefined ? undefined : parseBackupTimestamp(stamp);
      if (time !== undefined) out.push({ name, time });
    }
    return out.sort((a, b) => b.time - a.time);
  }

  private mill(): void {
    let files = this.backups();
    const remove: string[] = [];
    if (this.opts.maxBackups > 0) {
      // A backup and its gzipped twin (mid-compression) count once.
      const kept = new Set<string>();
      files = files.filter((f) => {
        const base = f.name.replace(/\.gz$/, '');
        if (kept.has(base) || kept.size < this.opts.maxBackups) {
          kept.add(base);
          return true;
        }
        remove.push(f.name);
        return false;
      });
    }
    if (this.opts.maxAgeDays > 0) {
      const cutoff = this.now().getTime() - this.opts.maxAgeDays * 24 * 3600 * 1000;
      files = files.filter((f) => (f.time < cutoff ? (remove.push(f.name), false) : true));
    }
    for (const name of remove) unlinkSync(path.join(this.dir, name));
    if (!this.opts.compress) return;
    for (const f of files) {
      if (f.name.endsWith('.gz')) continue;
      const file = path.join(this.dir, f.name);
      writeFileSync(`${file}.gz`, gzipSync(readFileSync(file)), { mode: statSync(file).mode & 0o777 });
      unlinkSync(file);
    }
  }
}
