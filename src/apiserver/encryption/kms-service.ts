/**
 * A client of a KMS v2 plugin: the KeyManagementService of api.proto over gRPC on the plugin's
 * unix socket, each call bounded by the provider's timeout. Whatever goes wrong between us and
 * the plugin (no socket, the plugin's own error, a deadline) is a StoreError 'Unavailable', so the
 * request that needed it gets a 503, never a 500.
 */
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { StoreError } from '../storage/store.js';

export const KMS_API_PROTO = fileURLToPath(new URL('./kms/api.proto', import.meta.url));

export interface StatusResponse {
  version: string;
  healthz: string;
  key_id: string;
}

export interface EncryptResponse {
  ciphertext: Buffer;
  key_id: string;
  annotations: Record<string, Buffer>;
}

export interface DecryptRequest {
  ciphertext: Buffer;
  uid: string;
  key_id: string;
  annotations: Record<string, Buffer>;
}

export interface KmsService {
  status(): Promise<StatusResponse>;
  encrypt(plaintext: Buffer, uid: string): Promise<EncryptResponse>;
  decrypt(request: DecryptRequest): Promise<Buffer>;
  close(): void;
}

/** proto-loader's view of api.proto; plugins written for tests load it the same way. */
export function loadKmsApi(): grpc.GrpcObject {
  const definition = protoLoader.loadSync(KMS_API_PROTO, { keepCase: true, defaults: true });
  return grpc.loadPackageDefinition(definition);
}

type Unary<Req, Res> = (req: Req, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, res: Res) => void) => void;

interface KmsClient extends grpc.Client {
  Status: Unary<Record<string, never>, StatusResponse>;
  Encrypt: Unary<{ plaintext: Buffer; uid: string }, EncryptResponse>;
  Decrypt: Unary<DecryptRequest, { plaintext: Buffer }>;
}

/** A client of the plugin at `endpoint` (`unix:///path/to/socket`, as the configuration gives it). */
export function connectKms(name: string, endpoint: string, timeoutMs: number): KmsService {
  const v2 = loadKmsApi().v2 as grpc.GrpcObject;
  const Client = v2.KeyManagementService as grpc.ServiceClientConstructor;
  const client = new Client(endpoint, grpc.credentials.createInsecure(), {
    // A plugin that comes back is found within seconds, not after grpc's default 2-minute backoff cap.
    'grpc.max_reconnect_backoff_ms': 1000,
    'grpc.initial_reconnect_backoff_ms': 100,
  }) as unknown as KmsClient;
  const call = <Req, Res>(method: 'Status' | 'Encrypt' | 'Decrypt', request: Req): Promise<Res> =>
    new Promise((resolve, reject) => {
      (client[method] as unknown as Unary<Req, Res>).call(client, request, { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (err) reject(new StoreError('Unavailable', '', `KMS provider ${name} ${method} failed: ${err.details || err.message}`));
        else resolve(res);
      });
    });
  return {
    status: () => call('Status', {}),
    encrypt: (plaintext, uid) => call('Encrypt', { plaintext, uid }),
    decrypt: async (request) => (await call<DecryptRequest, { plaintext: Buffer }>('Decrypt', request)).plaintext,
    close: () => client.close(),
  };
}
