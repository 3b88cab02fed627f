/**
 * client-node's HttpLibrary on the controller's Transport, so the typed APIs (leases, revisions, ...)
 * share the raw requests' connection pools and credentials: one transport for everything.
 */
import { ResponseContext, SelfDecodingBody, type RequestBody, type RequestContext } from '@kubernetes/client-node';
import type { IncomingHttpHeaders } from 'node:http';
import type { Method, Transport } from './transport.js';

function bodyText(body: RequestBody): string | undefined {
  if (body === undefined || typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  throw new Error('multipart request bodies are not supported by the controller transport');
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Sends a client-node request through `transport` with `extra` headers; the body is read in full before it resolves. */
export async function sendContext(transport: Transport, ctx: RequestContext, extra: Record<string, string> = {}): Promise<ResponseContext> {
  const res = await transport.fetch({
    method: ctx.getHttpMethod() as Method,
    path: transport.pathOf(ctx.getUrl()),
    headers: { ...ctx.getHeaders(), ...extra },
    body: bodyText(ctx.getBody()),
    signal: ctx.getSignal(),
  });
  return new ResponseContext(res.statusCode, flatHeaders(res.headers), new SelfDecodingBody(Promise.resolve(res.body)));
}
