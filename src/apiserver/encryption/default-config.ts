/**
 * `up`'s default beyond upstream's plaintext one: Secrets encrypted at rest with a secretbox key
 * generated into DATA_DIR/encryption-config.yaml (0600), an EncryptionConfiguration like any an
 * operator writes (so the rotation procedure applies to it unchanged). `identity` comes last so
 * the Secrets a data directory held in plaintext before still read; each is encrypted at its next
 * write (or all at once: `kubectl get secrets -A -o json | kubectl replace -f -`).
 *
 * secretbox rather than aesgcm: its 24-byte random nonces make key wear-out a non-issue, where
 * aesgcm with random 12-byte nonces must be rotated every 200k writes (upstream's advice).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const DEFAULT_ENCRYPTION_CONFIG_FILE = 'encryption-config.yaml';

function defaultConfig(secret: Buffer): string {
  return [
    '# Written by kube-identity up: Secrets are encrypted at rest with the secretbox key below.',
    '# Pass --encryption-provider-config to use a configuration of your own instead.',
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: EncryptionConfiguration',
    'resources:',
    '  - resources:',
    '      - secrets',
    '    providers:',
    '      - secretbox:',
    '          keys:',
    '            - name: key1',
    `              secret: ${secret.toString('base64')}`,
    '      - identity: {}',
    '',
  ].join('\n');
}

/** The default configuration's path in `dataDir`, made (0600, with a new key) when absent. */
export function ensureDefaultEncryptionConfig(dataDir: string): { file: string; created: boolean } {
  const file = path.join(dataDir, DEFAULT_ENCRYPTION_CONFIG_FILE);
  if (existsSync(file)) return { file, created: false };
  // Whole or not at all, and only once: replicas sharing the directory (etcd) may start together.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, defaultConfig(randomBytes(32)), { mode: 0o600 });
  try {
    linkSync(tmp, file);
    return { file, created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { file, created: false };
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}
