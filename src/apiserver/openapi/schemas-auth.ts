/** authentication.k8s.io/v1 and authorization.k8s.io/v1: tokens and access reviews. */
import { arr, bool, int64, kindSchema, map, META, obj, ref, type Schemas, str, time } from './builder.js';

const AUTHN = 'io.k8s.api.authentication.v1.';
const AUTHZ = 'io.k8s.api.authorization.v1.';
const authn = (kind: string) => ({ group: 'authentication.k8s.io', version: 'v1', kind });
const authz = (kind: string) => ({ group: 'authorization.k8s.io', version: 'v1', kind });

const sarSpec = obj({
  extra: map(arr(str())),
  groups: arr(str()),
  nonResourceAttributes: ref(`${AUTHZ}NonResourceAttributes`),
  resourceAttributes: ref(`${AUTHZ}ResourceAttributes`),
  uid: str(),
  user: str('The user to test for.'),
});

const review = (kind: string, spec: string, description: string) =>
  kindSchema(
    authz(kind),
    { spec: ref(AUTHZ + spec), status: ref(`${AUTHZ}SubjectAccessReviewStatus`) },
    { required: ['spec'], description },
  );

export const AUTH_SCHEMAS: Schemas = {
  [`${AUTHN}UserInfo`]: obj({ extra: map(arr(str())), groups: arr(str()), uid: str(), username: str() }),
  [`${AUTHN}BoundObjectReference`]: obj({ apiVersion: str(), kind: str('Pod, Secret or Node.'), name: str(), uid: str() }),
  [`${AUTHN}TokenRequest`]: kindSchema(
    authn('TokenRequest'),
    {
      spec: obj(
        {
          audiences: arr(str(), { description: 'Intended audiences of the token.' }),
          boundObjectRef: ref(`${AUTHN}BoundObjectReference`),
          expirationSeconds: int64('Requested duration of validity of the token.'),
        },
        { required: ['audiences'] },
      ),
      status: obj({ expirationTimestamp: time(), token: str() }, { required: ['token', 'expirationTimestamp'] }),
    },
    { required: ['spec'], description: 'TokenRequest requests a token for a given service account.' },
  ),
  [`${AUTHN}TokenReview`]: kindSchema(
    authn('TokenReview'),
    {
      spec: obj({ audiences: arr(str()), token: str('The opaque bearer token.') }),
      status: obj({
        audiences: arr(str()),
        authenticated: bool(),
        error: str(),
        user: ref(`${AUTHN}UserInfo`),
      }),
    },
    { required: ['spec'], description: 'TokenReview attempts to authenticate a token to a known user.' },
  ),
  [`${AUTHN}SelfSubjectReview`]: kindSchema(
    authn('SelfSubjectReview'),
    { status: obj({ userInfo: ref(`${AUTHN}UserInfo`) }) },
    { description: 'SelfSubjectReview returns the user attributes of the requester.' },
  ),
  [`${AUTHZ}ResourceAttributes`]: obj({
    fieldSelector: obj({ rawSelector: str(), requirements: arr(ref(`${META}FieldSelectorRequirement`)) }),
    group: str(),
    labelSelector: obj({ rawSelector: str(), requirements: arr(ref(`${META}LabelSelectorRequirement`)) }),
    name: str(),
    namespace: str(),
    resource: str(),
    subresource: str(),
    verb: str(),
    version: str(),
  }),
  [`${META}FieldSelectorRequirement`]: obj(
    { key: str(), operator: str(), values: arr(str(), { listType: 'atomic' }) },
    { required: ['key', 'operator'] },
  ),
  [`${AUTHZ}NonResourceAttributes`]: obj({ path: str(), verb: str() }),
  [`${AUTHZ}SubjectAccessReviewSpec`]: sarSpec,
  [`${AUTHZ}SelfSubjectAccessReviewSpec`]: obj({
    nonResourceAttributes: ref(`${AUTHZ}NonResourceAttributes`),
    resourceAttributes: ref(`${AUTHZ}ResourceAttributes`),
  }),
  [`${AUTHZ}SubjectAccessReviewStatus`]: obj(
    { allowed: bool(), denied: bool(), evaluationError: str(), reason: str() },
    { required: ['allowed'] },
  ),
  [`${AUTHZ}SubjectAccessReview`]: review(
    'SubjectAccessReview',
    'SubjectAccessReviewSpec',
    'SubjectAccessReview checks whether a user or group can perform an action.',
  ),
  [`${AUTHZ}LocalSubjectAccessReview`]: review(
    'LocalSubjectAccessReview',
    'SubjectAccessReviewSpec',
    'LocalSubjectAccessReview checks whether a user or group can perform an action in a namespace.',
  ),
  [`${AUTHZ}ResourceRule`]: obj(
    { apiGroups: arr(str()), resourceNames: arr(str()), resources: arr(str()), verbs: arr(str()) },
    { required: ['verbs'] },
  ),
  [`${AUTHZ}NonResourceRule`]: obj({ nonResourceURLs: arr(str()), verbs: arr(str()) }, { required: ['verbs'] }),
  [`${AUTHZ}SelfSubjectRulesReview`]: kindSchema(
    authz('SelfSubjectRulesReview'),
    {
      spec: obj({ namespace: str('Namespace to evaluate rules for.') }),
      status: obj(
        {
          evaluationError: str(),
          incomplete: bool(),
          nonResourceRules: arr(ref(`${AUTHZ}NonResourceRule`)),
          resourceRules: arr(ref(`${AUTHZ}ResourceRule`)),
        },
        { required: ['resourceRules', 'nonResourceRules', 'incomplete'] },
      ),
    },
    { required: ['spec'], description: 'SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace.' },
  ),
  [`${AUTHZ}SelfSubjectAccessReview`]: review(
    'SelfSubjectAccessReview',
    'SelfSubjectAccessReviewSpec',
    'SelfSubjectAccessReview checks whether the current user can perform an action.',
  ),
};
