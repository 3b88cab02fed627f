/**
 * The suite's malformed requests, in one list: bad-input.test.ts checks each one's exact answer,
 * no-5xx.test.ts walks them together with the other suites' malformed requests and asserts that
 * none is answered with a 5xx. Every case runs against a server seeded by `seedBadInput`.
 */
import { raw, type RawOptions, type RawTarget } from '../helpers/http.js';

export type BadInputCase = [string, string, string, RawOptions, number, string | RegExp];

/** The objects the cases refer to. */
export async function seedBadInput(s: RawTarget): Promise<void> {
  await raw(s, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'existing' } } });
}

const SA = '/api/v1/namespaces/default/serviceaccounts';
const big = 'x'.repeat(3 * 1024 * 1024 + 10);

/** [case, method, path, request, expected status, expected message]. */
export const BAD_INPUT_CASES: BadInputCase[] = [
  ['malformed JSON', 'POST', SA, { body: '{"metadata":' }, 400, /^the object provided is unrecognized \(must be of type ServiceAccount\)/],
  ['oversized body', 'POST', SA, { body: big }, 413, 'Request entity too large: limit is 3145728'],
  ['wrong content type', 'POST', SA, { body: 'x', contentType: 'text/plain' }, 415, /^the body of the request was in an unknown format/],
  ['array body', 'POST', SA, { body: [] }, 400, /cannot be handled as a ServiceAccount/],
  ['wrong apiVersion', 'POST', SA, { body: { apiVersion: 'apps/v1', kind: 'ServiceAccount', metadata: { name: 'q' } } }, 400,
    'the API version in the data (apps/v1) does not match the expected API version (v1)'],
  ['wrong kind', 'POST', SA, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'q' } } }, 400, /cannot be handled as a ServiceAccount/],
  ['namespace mismatch', 'POST', SA, { body: { metadata: { name: 'q', namespace: 'kube-system' } } }, 400,
    'the namespace of the provided object does not match the namespace sent on the request'],
  ['name mismatch with URL', 'PUT', `${SA}/existing`, { body: { metadata: { name: 'other' } } }, 400,
    'the name of the object (other) does not match the name on the URL (existing)'],
  ['invalid name', 'POST', SA, { body: { metadata: { name: 'Bad_Name' } } }, 422, /^ServiceAccount "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/],
  ['missing name', 'POST', SA, { body: { metadata: {} } }, 422, 'ServiceAccount "" is invalid: metadata.name: Required value: name or generateName is required'],
  ['resourceVersion on create', 'POST', SA, { body: { metadata: { name: 'rv', resourceVersion: '5' } } }, 400, 'resourceVersion should not be set on objects to be created'],
  ['bad label selector', 'GET', `${SA}?labelSelector=a%20b`, {}, 400, /.+/],
  ['unknown resource', 'GET', '/api/v1/namespaces/default/widgets', {}, 404, 'the server could not find the requested resource'],
  ['missing object', 'GET', `${SA}/nope`, {}, 404, 'serviceaccounts "nope" not found'],
  ['no credentials', 'GET', SA, { anonymous: true }, 401, 'Unauthorized'],
  ['unsupported patch type', 'PATCH', `${SA}/existing`, { body: '{}', contentType: 'application/foo' }, 415, /^the body of the request was in an unknown format/],
  ['bad includeObject', 'GET', `${SA}?includeObject=x`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } }, 400,
    'unrecognized includeObject value: "x"'],
  ['strict duplicate field', 'POST', `${SA}?fieldValidation=Strict`, { body: '{"metadata":{"name":"d","name":"d"}}' }, 400,
    'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: strict decoding error: duplicate field "metadata.name"'],
  ['bad fieldValidation', 'POST', `${SA}?fieldValidation=Loose`, { body: { metadata: { name: 'fv' } } }, 422,
    'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"'],
  ['metadata.name a number', 'POST', SA, { body: { metadata: { name: 5 } } }, 400,
    'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string'],
  ['metadata.labels a string', 'POST', SA, { body: { metadata: { name: 'q', labels: 'x' } } }, 400,
    'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string'],
  ['metadata.finalizers of numbers', 'POST', SA, { body: { metadata: { name: 'q', finalizers: [1] } } }, 400,
    'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type string'],
  ['verb not supported', 'DELETE', '/api/v1/namespaces', {}, 405, 'deletecollection is not supported on resources of kind "namespaces"'],
];
