/**
 * The HTTP wire under the handlers: bounded request-body reads, response writing and
 * Warning headers. Everything above this layer works with objects and ApiErrors.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, MAX_REQUEST_BODY_BYTES, errors } from './errors.js';

/**
 * Reads the whole body, counting bytes as they arrive so an oversized body is refused (413)
 * without ever being held in memory.
 */
export function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) return Promise.reject(errors.tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: ApiError): void => {
      if (done) return;
      done = true;
      req.off('data', onData);
      if (err) {
        // Stop reading; the connection is closed after the error response.
        req.pause();
        reject(err);
      } else {
        // The chunks are ours to keep, as every reader keeps them until 'end': a body that came in
        // one chunk, as most do, is taken as it came rather than copied.
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) finish(errors.tooLarge());
      else chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish());
    req.once('error', (e) => finish(errors.badRequest(`error reading request body: ${e.message}`)));
    req.once('aborted', () => finish(errors.badRequest('request body aborted')));
  });
}

/** Appends one `Warning: 299 - "<text>"` header per message, as upstream does. */
export function warningHeaders(warnings: readonly string[]): string[] {
  return warnings.map((w) => `299 - ${JSON.stringify(w)}`);
}

export function setWarnings(res: ServerResponse, warnings: readonly string[]): void {
  if (warnings.length > 0 && !res.headersSent) res.setHeader('Warning', warningHeaders(warnings));
}

/** kube-apiserver's WithCacheControl default. */
const NO_CACHE = ['Cache-Control', 'no-cache, private'] as const;

/**
 * The whole response in one writeHead (a flat name/value list, which node:http stores without the
 * per-call checks and object of setHeader) and one end. Headers a handler set before (Warning,
 * Audit-ID, Connection: close) stay; a handler's own Cache-Control (the discovery documents' public
 * caching) wins over the default.
 */
export function writeBody(res: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const length = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  const headers = res.hasHeader('Cache-Control') ? ['Content-Type', contentType, 'Content-Length', length] : ['Content-Type', contentType, 'Content-Length', length, ...NO_CACHE];
  res.writeHead(status, headers);
  res.end(body);
}

export function writeJson(res: ServerResponse, status: number, value: unknown, pretty = false): void {
  const text = pretty ? `${JSON.stringify(value, null, 2)}\n` : `${JSON.stringify(value)}\n`;
  writeBody(res, status, 'application/json', text);
}

/** Renders an ApiError as its Status body (always JSON, HTTP status = code). */
export function writeError(res: ServerResponse, err: ApiError, pretty = false): void {
  for (const [k, v] of Object.entries(err.headers)) if (!res.headersSent) res.setHeader(k, v);
  writeJson(res, err.code, err.toStatus(), pretty);
}
