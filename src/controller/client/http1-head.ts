/**
 * What http1.ts reads from a response head: the status line and fields, how long the connection may
 * idle, and how the body is framed.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** An idle connection is closed after this long unless the server's Keep-Alive header asks for less (undici's default). */
export const IDLE_MS = 4000;

/** Parses a response head (status line and fields); undefined when it is not HTTP/1.x. */
export function parseHead(text: string): { version: number; status: number; headers: IncomingHttpHeaders } | undefined {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0] ?? '');
  if (!m) return undefined;
  const headers: IncomingHttpHeaders = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const prev = headers[name];
    if (name === 'set-cookie') headers['set-cookie'] = [...(prev ?? []), value];
    else headers[name] = prev === undefined ? value : `${prev as string}, ${value}`;
  }
  return { version: Number(m[1]), status: Number(m[2]), headers };
}

/** Idle time the server's `Keep-Alive: timeout=N` allows us, less a second for the race; IDLE_MS at most. */
export function idleMsFor(headers: IncomingHttpHeaders): number {
  const m = /timeout=(\d+)/i.exec(String(headers['keep-alive'] ?? ''));
  return m ? Math.max(0, Math.min(IDLE_MS, Number(m[1]) * 1000 - 1000)) : IDLE_MS;
}

/** How the reply's body is framed (RFC 9112 section 6.3): its length, chunked, until the server closes, or a broken length. */
export function bodyLength(method: string, status: number, headers: IncomingHttpHeaders): number | 'chunked' | 'close' | 'invalid' {
  if (method === 'HEAD' || status === 204 || status === 304) return 0;
  const te = headers['transfer-encoding'];
  if (te !== undefined) return /(?:^|,)\s*chunked\s*$/i.test(te) ? 'chunked' : 'close';
  const cl = headers['content-length'];
  if (cl === undefined) return 'close';
  return /^\d{1,15}$/.test(cl) ? Number(cl) : 'invalid';
}
