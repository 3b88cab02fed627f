/**
 * A KMS v2 plugin for tests, speaking the real protocol (src/apiserver/encryption/kms/api.proto)
 * on a unix socket: it encrypts DEK seeds with AES-256-GCM under a key per key ID, so a ciphertext
 * only decrypts with the key ID it was made under. It can be stopped and started again on the same
 * socket (an outage), be made to answer unhealthy, and rotate its key ID.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import grpc from '@grpc/grpc-js';
import { loadKmsApi } from '../../src/apiserver/encryption/kms-service.js';

export interface TestKmsPlugin {
  endpoint: string;
  /** Calls received, by method. */
  calls: { Status: number; Encrypt: number; Decrypt: number };
  keyId: string;
  /** Status answers this as healthz ("ok" when healthy). */
  healthz: string;
  rotate(keyId: string): void;
  stop(): Promise<void>;
  start(): Promise<void>;
}

type Callback<T> = (err: grpc.ServiceError | null, res?: T) => void;

export async function startKmsPlugin(socketPath: string, keyId = 'key-1'): Promise<TestKmsPlugin> {
  const keys = new Map<string, Buffer>();
  const keyFor = (id: string): Buffer => keys.get(id) ?? keys.set(id, randomBytes(32)).get(id)!;
  let server: grpc.Server | undefined;
  const plugin: TestKmsPlugin = {
    endpoint: `unix://${socketPath}`,
    calls: { Status: 0, Encrypt: 0, Decrypt: 0 },
    keyId,
    healthz: 'ok',
    rotate(id) {
      plugin.keyId = id;
    },
    async stop() {
      const s = server;
      server = undefined;
      if (s) await new Promise<void>((resolve) => s.tryShutdown(() => resolve()));
      s?.forceShutdown();
      rmSync(socketPath, { force: true });
    },
    async start() {
      const s = new grpc.Server();
      const service = ((loadKmsApi().v2 as grpc.GrpcObject).KeyManagementService as grpc.ServiceClientConstructor).service;
      s.addService(service, {
        Status: (_call: unknown, cb: Callback<object>) => {
          plugin.calls.Status++;
          cb(null, { version: 'v2', healthz: plugin.healthz, key_id: plugin.keyId });
        },
        Encrypt: (call: { request: { plaintext: Buffer } }, cb: Callback<object>) => {
          plugin.calls.Encrypt++;
          const nonce = randomBytes(12);
          const cipher = createCipheriv('aes-256-gcm', keyFor(plugin.keyId), nonce);
          const body = Buffer.concat([cipher.update(call.request.plaintext), cipher.final()]);
          cb(null, { ciphertext: Buffer.concat([nonce, body, cipher.getAuthTag()]), key_id: plugin.keyId, annotations: { 'kms.example.com/test': Buffer.from('1') } });
        },
        Decrypt: (call: { request: { ciphertext: Buffer; key_id: string } }, cb: Callback<object>) => {
          plugin.calls.Decrypt++;
          try {
            const c = call.request.ciphertext;
            const decipher = createDecipheriv('aes-256-gcm', keyFor(call.request.key_id), c.subarray(0, 12));
            decipher.setAuthTag(c.subarray(c.length - 16));
            cb(null, { plaintext: Buffer.concat([decipher.update(c.subarray(12, c.length - 16)), decipher.final()]) });
          } catch (err) {
            cb({ code: grpc.status.INVALID_ARGUMENT, details: (err as Error).message, message: (err as Error).message, name: 'Error', metadata: new grpc.Metadata() });
          }
        },
      });
      rmSync(socketPath, { force: true });
      await new Promise<void>((resolve, reject) =>
        s.bindAsync(plugin.endpoint, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
      );
      server = s;
    },
  };
  await plugin.start();
  return plugin;
}
