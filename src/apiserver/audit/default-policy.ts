/**
 * The policy `kube-identity up` audits with: who did what to which object for every request, the
 * whole approval and issuance of each CSR, and never a credential: Secrets, TokenRequests (the
 * minted token is in the response) and TokenReviews (the token is in the request) are recorded
 * at Metadata, without bodies.
 */
import { writeFileSync } from 'node:fs';
import { parsePolicy } from './policy.js';
import type { Policy } from './types.js';

export const DEFAULT_POLICY_FILE = 'audit-policy.yaml';
export const DEFAULT_LOG_FILE = 'audit.log';

export const DEFAULT_POLICY_YAML = `# kube-identity up's audit policy: an audit.k8s.io/v1 Policy, as kube-apiserver's
# --audit-policy-file reads it. up writes this file only when it is absent, so edits stay.
# The first rule that matches a request decides its level. docs/audit.md shows how to read the log.
apiVersion: audit.k8s.io/v1
kind: Policy
# ResponseComplete carries everything RequestReceived does, and the outcome.
omitStages:
  - RequestReceived
rules:
  # Credentials travel in these bodies (a Secret's data, a minted token, a reviewed token):
  # record who, what and when, never the bodies.
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets", "serviceaccounts/token"]
      - group: authentication.k8s.io
        resources: ["tokenreviews"]
  # Who approved or denied a CSR, and what the signer issued: the whole request and answer.
  - level: RequestResponse
    verbs: ["update", "patch"]
    resources:
      - group: certificates.k8s.io
        resources: ["certificatesigningrequests/approval", "certificatesigningrequests/status"]
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
