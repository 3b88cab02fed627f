/**
 * client-node's KubeConfig builds a fresh http(s).Agent for every request, so every API call would
 * open a new connection and pay a full TLS handshake (a new SecureContext, key load, ECDHE) on both
 * sides: measured at ~30% of the controller's CPU and most of its per-request latency. client-go
 * keeps one connection pool per transport config; this does the same: requests whose TLS options
 * are equal share one keep-alive agent, and a change of options (a rotated client certificate or
 * CA in the kubeconfig) gets a new agent.
 */
import http from 'node:http';
import https from 'node:https';

type AnyAgent = http.Agent | https.Agent;

/** The options client-node sets on the agents it builds; equal values mean the same transport. */
const TLS_OPTIONS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'servername', 'rejectUnauthorized'] as const;

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  return false;
}

function sameOptions(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return TLS_OPTIONS.every((k) => sameValue(a[k], b[k]));
}

function optionsOf(agent: AnyAgent): Record<string, unknown> {
  return (agent as unknown as { options?: Record<string, unknown> }).options ?? {};
}

export class AgentPool {
  private current: { options: Record<string, unknown>; agent: AnyAgent } | undefined;

  /**
   * The pooled keep-alive agent to use instead of `fresh` (the one client-node just built). Proxy
   * agents and anything else that is not a plain http(s).Agent are returned unchanged.
   */
  reuse(fresh: AnyAgent | undefined): AnyAgent | undefined {
    if (!fresh || (fresh.constructor !== https.Agent && fresh.constructor !== http.Agent)) return fresh;
    const options = optionsOf(fresh);
    const cur = this.current;
    if (cur && cur.agent.constructor === fresh.constructor && sameOptions(cur.options, options)) return cur.agent;
    const Ctor = fresh.constructor as typeof https.Agent;
    // The previous agent's sockets finish their requests and are closed by the server when idle.
    const agent = new Ctor({ ...options, keepAlive: true });
    this.current = { options, agent };
    return agent;
  }

  /** Closes the pooled connections (on shutdown). */
  destroy(): void {
    this.current?.agent.destroy();
    this.current = undefined;
  }
}
