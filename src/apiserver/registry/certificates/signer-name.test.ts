import { fieldErrorString } from '../../http/field-errors.js';
import { validateSignerName } from './signer-name.js';

const texts = (name: string): string[] => validateSignerName('spec.signerName', name).map(fieldErrorString);

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('validateSignerName', () => {
  it.each(['example.com/my-signer', 'kubernetes.io/kube-apiserver-client', 'a.b/c.d-e', 'sub.example.com/x'])('accepts %s', (name) => {
    expect(texts(name)).toEqual([]);
  });

  it('requires a value', () => {
    expect(texts('')).toEqual(['spec.signerName: Required value']);
  });

  it.each(['foo', 'kubernetes.io', 'a/b/c'])('rejects %j as not domain/path and stops', (name) => {
    expect(texts(name)).toEqual([
      `spec.signerName: Invalid value: "${name}": must be a fully qualified domain and path of the form 'example.com/signer-name'`,
    ]);
  });

  it('reports only the first bad domain label, with the domain as value', () => {
    expect(texts('Bad.Example.com/x')).toEqual([`spec.signerName: Invalid value: "Bad.Example.com": validating label "Bad": ${LABEL_MSG}`]);
  });

  it('needs two domain labels', () => {
    expect(texts('localhost/x')).toEqual([
      'spec.signerName: Invalid value: "localhost": should be a domain with at least two segments separated by dots',
    ]);
  });

  it('validates path pieces as subdomains, empty path included', () => {
    expect(texts('example.com/')).toEqual([`spec.signerName: Invalid value: "": validating label "": ${SUBDOMAIN_MSG}`]);
    expect(texts('example.com/ok.Bad_')).toEqual([`spec.signerName: Invalid value: "ok.Bad_": validating label "Bad_": ${SUBDOMAIN_MSG}`]);
  });

  it('limits label length to 63 with both messages for the first bad label', () => {
    const long = 'a'.repeat(64);
    expect(texts(`${long}.com/x`)).toEqual([
      `spec.signerName: Invalid value: "${long}.com": validating label "${long}": must be no more than 63 characters`,
    ]);
  });

  it('limits the domain to 253 bytes and the whole name to 571', () => {
    const domain = Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.'); // 304 bytes
    expect(texts(`${domain}/x`)).toEqual(['spec.signerName: Too long: may not be more than 253 bytes']);
    const path = `${'b'.repeat(250)}.${'b'.repeat(250)}`; // pieces are subdomains: up to 253 each
    const name = `${'c'.repeat(60)}.${'d'.repeat(60)}.example.com/${path}`; // 635 bytes
    expect(texts(name)).toEqual(['spec.signerName: Too long: may not be more than 571 bytes']);
  });
});
