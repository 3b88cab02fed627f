/**
 * Requests on undici's dispatch API. undici's `request` wraps every reply in a Readable stream
 * (read here through an async iterator or 'data' events) and wires the abort signal through it; for
 * the controller's small JSON replies and watch chunks that machinery cost about a third of a
 * keep-alive PUT's client CPU (docs/performance.md, "The controller's CPU per CSR"). The handler
 * here hands each chunk on as it arrives: collected for a reply read in full, or to a sink (a watch).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

export interface Reply {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The whole body; empty when a sink took it (a streamed 2xx reply). */
  body: Buffer;
  /** Ends a streamed reply early (its sink then sees `end` with an AbortError); a no-op otherwise. */
  stop(): void;
}

/** Where a streamed 2xx reply's body goes, chunk by chunk. */
export interface BodySink {
  data(chunk: Buffer): void;
  /** Once: without an error when the body ended, with one when it failed or was stopped. */
  end(err?: Error): void;
}

const EMPTY = Buffer.alloc(0);

/**
 * Dispatches `opts` on `dispatcher`. Resolves once the reply is complete, or, given a `sink`, once a
 * 2xx reply's headers arrived (its body then streams into the sink). Any other reply is read in
 * full. An abort of `signal` before that fails it with the signal's reason (an AbortError), as
 * undici's `request` does; after it, the sink ends with that reason.
 */
export function dispatchReply(dispatcher: Dispatcher, opts: Dispatcher.DispatchOptions, signal?: AbortSignal, sink?: BodySink): Promise<Reply> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    let streaming = false;
    const chunks: Buffer[] = [];
    const abort = (reason: Error): void => controller?.abort(reason);
    const onAbort = (): void => abort(abortReason(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    const settled = (): void => signal?.removeEventListener('abort', onAbort);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (signal?.aborted) c.abort(abortReason(signal));
      },
      onResponseStart(_c, code, h) {
        statusCode = code;
        headers = h;
        if (sink && code >= 200 && code <= 299) {
          streaming = true;
          resolve({ statusCode, headers, body: EMPTY, stop: () => abort(abortReason(undefined)) });
        }
      },
      onResponseData(_c, chunk) {
        if (streaming) sink?.data(chunk);
        else chunks.push(chunk);
      },
      onResponseEnd() {
        settled();
        if (streaming) sink?.end();
        else resolve({ statusCode, headers, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks), stop: () => {} });
      },
      onResponseError(_c, err) {
        settled();
        if (streaming) sink?.end(err);
        else reject(err);
      },
    };
    try {
      dispatcher.dispatch(opts, handler);
    } catch (err) {
      settled();
      reject(err as Error);
    }
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}
