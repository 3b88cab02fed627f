/**
 * The policy `kube-identity up` audits with, in the spirit of the policy upstream's cluster scripts
 * write for kube-apiserver: a node's heartbeat and other high-volume, low-risk reads and renewals
 * are not recorded; every write to an identity object (CSRs, their approval and status,
 * ServiceAccounts, RBAC, trust bundles, pod certificates) is, with its body; and never a
 * credential: Secrets, ConfigMaps, TokenRequests (the minted token is in the response) and
 * TokenReviews (the token is in the request) are recorded at Metadata, without bodies.
 */
import { writeFileSync } from 'node:fs';
import { parsePolicy } from './policy.js';
import type { Policy } from './types.js';

export const DEFAULT_POLICY_FILE = 'audit-policy.yaml';
export const DEFAULT_LOG_FILE = 'audit.log';

export const DEFAULT_POLICY_YAML = `# kube-identity up's audit policy: an audit.k8s.io/v1 Policy, as kube-apiserver's
# --audit-policy-file reads it. up writes this file only when it is absent, so edits stay.
# The first rule that matches a request decides its level. docs/audit.md explains each rule
# and shows how to read the log.
apiVersion: audit.k8s.io/v1
kind: Policy
# ResponseComplete carries everything RequestReceived does, and the outcome.
omitStages:
  - RequestReceived
rules:
  # Not recorded: frequent, and nothing in them changes who may do what.
  # A node renewing its own Lease every 10 s (creating it, at join, is still recorded).
  - level: None
    userGroups: ["system:nodes"]
    verbs: ["get", "update", "patch"]
    namespaces: ["kube-node-lease"]
    resources:
      - group: coordination.k8s.io
        resources: ["leases"]
  # A node reading its own Node.
  - level: None
    userGroups: ["system:nodes"]
    verbs: ["get"]
    resources:
      - group: ""
        resources: ["nodes", "nodes/status"]
  # The controller's leader election renewing its Lease (taking it first, a create, is recorded).
  - level: None
    users: ["system:kube-identity-controller"]
    verbs: ["get", "update"]
    namespaces: ["kube-system"]
    resources:
      - group: coordination.k8s.io
        resources: ["leases"]
  # Events: a record of what happened, written often; the writes they describe are audited.
  - level: None
    resources:
      - group: ""
        resources: ["events"]
      - group: events.k8s.io
        resources: ["events"]
  # The server's version (health checks are answered before authentication and never audited).
  - level: None
    nonResourceURLs:
      - /version
      - /healthz*
      - /livez*
      - /readyz*
  # Credentials travel in these bodies (a Secret's data, a minted token, a reviewed token) or may
  # (a ConfigMap): record who, what and when, never the bodies.
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets", "configmaps", "serviceaccounts/token"]
      - group: authentication.k8s.io
        resources: ["tokenreviews"]
  # Every change to who is who and who may do what, with the object as sent and as stored: a CSR
  # (what was asked, and the identity the server recorded for the requester), its approval or
  # denial and the issued certificate (public), ServiceAccounts, RBAC, trust bundles and pods'
  # certificates. None of these holds a secret.
  - level: RequestResponse
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
    resources:
      - group: certificates.k8s.io
        resources:
          - certificatesigningrequests
          - certificatesigningrequests/approval
          - certificatesigningrequests/status
          - clustertrustbundles
          - podcertificaterequests
          - podcertificaterequests/status
      - group: ""
        resources: ["serviceaccounts"]
      - group: rbac.authorization.k8s.io
  # Everything else: who did what to which object, and how it ended.
  - level: Metadata
`;

export function defaultPolicy(): Policy {
  return parsePolicy(DEFAULT_POLICY_YAML);
}

/** The default policy as a file the operator reads and edits (up uses the file from then on). */
export function writeDefaultPolicy(file: string): void {
  writeFileSync(file, DEFAULT_POLICY_YAML, { mode: 0o600, flag: 'wx' });
}
