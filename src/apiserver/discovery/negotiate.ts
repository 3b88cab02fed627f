/**
 * Accept-header negotiation for discovery: the first acceptable media range in the client's list
 * wins, as upstream's negotiator does. Anything that is not an aggregated-discovery range falls
 * back to the legacy JSON document, which every client can read.
 */
import type { AggregatedVersion } from './aggregated.js';

export interface MediaRange {
  type: string;
  params: Record<string, string>;
}

/** Parses `type/subtype;k=v;k=v, ...` into ranges, lower-casing types and parameter names. */
export function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const [type = '', ...rest] = part.split(';');
      const params: Record<string, string> = {};
      for (const p of rest) {
        const eq = p.indexOf('=');
        if (eq < 0) continue;
        params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
      }
      return { type: type.trim().toLowerCase(), params };
    });
}

/**
 * The aggregated discovery version the client asked for first, or undefined for the legacy form. Only
 * v2: kube-apiserver 1.33 stopped serving v2beta1 (AggregatedDiscoveryRemoveBetaType), so a v2beta1 range
 * is passed over like any other this server cannot produce.
 */
export function negotiateAggregated(accept: string): AggregatedVersion | undefined {
  for (const r of parseAccept(accept)) {
    if (r.params.q === '0') continue;
    const aggregated =
      r.type === 'application/json' && r.params.g === 'apidiscovery.k8s.io' && r.params.as === 'APIGroupDiscoveryList';
    if (aggregated && r.params.v === 'v2') return r.params.v;
    if (aggregated) continue;
    if (r.type === 'application/json' && r.params.as === undefined) return undefined;
    if (r.type === '*/*' || r.type === 'application/*') return undefined;
  }
  return undefined;
}
