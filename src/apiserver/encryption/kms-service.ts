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
import { grpcCodeName } from './kms-metrics.js';

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

/**
 * api.proto's three calls, with their messages as proto-loader decodes them (keepCase, defaults: every
 * field present). grpc-js's generic unary call carries these types; its method definitions give the
 * path and the (de)serializers.
 */
interface KmsCalls {
  Status: { request: Record<string, never>; response: StatusResponse };
  Encrypt: { request: { plaintext: Buffer; uid: string }; response: EncryptResponse };
  Decrypt: { request: DecryptRequest; response: { plaintext: Buffer } };
}

/** The method definitions of api.proto's v2.KeyManagementService. */
function kmsMethods(): grpc.ServiceDefinition {
  const v2 = loadKmsApi().v2;
  const service = v2 && typeof v2 !== 'function' && !('format' in v2) ? v2.KeyManagementService : undefined;
  if (typeof service !== 'function') throw new Error(`${KMS_API_PROTO} defines no v2.KeyManagementService`);
  return service.service;
}

/** Observes each call to a plugin: its gRPC method (`/v2.KeyManagementService/Decrypt`), duration and status code name (`OK`, `Unavailable`). */
export type KmsCallObserver = (method: string, seconds: number, code: string) => void;

/** A client of the plugin at `endpoint` (`unix:///path/to/socket`, as the configuration gives it). */
export function connectKms(name: string, endpoint: string, timeoutMs: number, observe?: KmsCallObserver): KmsService {
  const methods = kmsMethods();
  const client = new grpc.Client(endpoint, grpc.credentials.createInsecure(), {
    // A plugin that comes back is found within seconds, not after grpc's default 2-minute backoff cap.
    'grpc.max_reconnect_backoff_ms': 1000,
    'grpc.initial_reconnect_backoff_ms': 100,
  });
  const call = <M extends keyof KmsCalls>(method: M, request: KmsCalls[M]['request']): Promise<KmsCalls[M]['response']> =>
    new Promise((resolve, reject) => {
      const fail = (why: string) => reject(new StoreError('Unavailable', '', `KMS provider ${name} ${method} failed: ${why}`));
      const def = methods[method];
      if (!def) return fail('no such method in api.proto');
      const start = process.hrtime.bigint();
      client.makeUnaryRequest<KmsCalls[M]['request'], KmsCalls[M]['response']>(
        def.path,
        def.requestSerialize,
        def.responseDeserialize,
        request,
        { deadline: Date.now() + timeoutMs },
        (err, res) => {
          observe?.(def.path, Number(process.hrtime.bigint() - start) / 1e9, err ? grpcCodeName(grpc.status[err.code]) : 'OK');
          if (err) fail(err.details || err.message);
          else if (!res) fail('empty response');
          else resolve(res);
        },
      );
    });
  return {
    status: () => call('Status', {}),
    encrypt: (plaintext, uid) => call('Encrypt', { plaintext, uid }),
    decrypt: async (request) => (await call('Decrypt', request)).plaintext,
    close: () => client.close(),
  };
}
