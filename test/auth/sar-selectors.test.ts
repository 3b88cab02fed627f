/**
 * SubjectAccessReview field and label selectors (AuthorizeWithSelectors, beta in 1.32, GA in 1.34): a
 * review's fieldSelector reaches the authorizers as a list's would, so the Node authorizer answers "may
 * node-a list the pods bound to it" as it answers the list itself. rawSelector and requirements together
 * are refused.
 */
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.close();
});

const NODE = { user: 'system:node:node-a', groups: ['system:nodes', 'system:authenticated'] };

async function review(resourceAttributes: Record<string, unknown>): Promise<{ status: number; allowed?: boolean; body: Record<string, unknown> }> {
  const res = await raw(srv, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { ...NODE, resourceAttributes } },
  });
  return { status: res.status, allowed: res.json?.status?.allowed, body: res.json };
}

const listPods = { verb: 'list', resource: 'pods', version: 'v1' };

it('answers a node listing its own pods by field selector, raw or as requirements, and nothing wider', async () => {
  expect(await review(listPods)).toMatchObject({ status: 201, allowed: false });
  expect(await review({ ...listPods, fieldSelector: { rawSelector: 'spec.nodeName=node-a' } })).toMatchObject({ status: 201, allowed: true });
  expect(await review({ ...listPods, fieldSelector: { rawSelector: 'spec.nodeName=node-b' } })).toMatchObject({ status: 201, allowed: false });
  const req = (operator: string, values: string[]): unknown => ({ requirements: [{ key: 'spec.nodeName', operator, values }] });
  expect(await review({ ...listPods, verb: 'watch', fieldSelector: req('In', ['node-a']) })).toMatchObject({ status: 201, allowed: true });
  // Requirements a field selector cannot express only widen the question: answered as unlimited.
  expect(await review({ ...listPods, fieldSelector: req('In', ['node-a', 'node-b']) })).toMatchObject({ status: 201, allowed: false });
  expect(await review({ ...listPods, fieldSelector: req('NotIn', ['node-b']) })).toMatchObject({ status: 201, allowed: false });
});

it('refuses rawSelector and requirements together, for field and label selectors', async () => {
  for (const which of ['fieldSelector', 'labelSelector']) {
    const both = { rawSelector: 'a=b', requirements: [{ key: 'a', operator: 'In', values: ['b'] }] };
    const res = await review({ ...listPods, [which]: both });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe(
      `SubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.${which}.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements`,
    );
  }
});
