/** authentication.k8s.io/v1 and authorization.k8s.io/v1: tokens and access reviews. */
import { arr, bool, enumStr, int64, kindSchema, map, META, obj, ref, type Schema, type Schemas, str, time } from './builder.js';

const AUTHN = 'io.k8s.api.authentication.v1.';
const AUTHZ = 'io.k8s.api.authorization.v1.';
const authn = (kind: string) => ({ group: 'authentication.k8s.io', version: 'v1', kind });
const authz = (kind: string) => ({ group: 'authorization.k8s.io', version: 'v1', kind });

/** `map[string]ExtraValue`, ExtraValue being a named `[]string` in both groups. */
const extra = (): Schema => map(arr(str(), { goType: 'v1.ExtraValue' }));

const sarSpec = obj({
  extra: extra(),
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
  [`${AUTHN}UserInfo`]: obj({ extra: extra(), groups: arr(str()), uid: str(), username: str() }),
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
        { required: ['audiences'], goType: 'v1.TokenRequestSpec' },
      ),
      status: obj({ expirationTimestamp: time(), token: str() }, { required: ['token', 'expirationTimestamp'], goType: 'v1.TokenRequestStatus' }),
    },
    { required: ['spec'], description: 'TokenRequest requests a token for a given service account.' },
  ),
  [`${AUTHN}TokenReview`]: kindSchema(
    authn('TokenReview'),
    {
      spec: obj({ audiences: arr(str()), token: str('The opaque bearer token.') }, { goType: 'v1.TokenReviewSpec' }),
      status: obj({
        audiences: arr(str()),
        authenticated: bool(),
        error: str(),
        user: ref(`${AUTHN}UserInfo`),
      }, { goType: 'v1.TokenReviewStatus' }),
    },
    { required: ['spec'], description: 'TokenReview attempts to authenticate a token to a known user.' },
  ),
  [`${AUTHN}SelfSubjectReview`]: kindSchema(
    authn('SelfSubjectReview'),
    { status: obj({ userInfo: ref(`${AUTHN}UserInfo`) }, { goType: 'v1.SelfSubjectReviewStatus' }) },
    { description: 'SelfSubjectReview returns the user attributes of the requester.' },
  ),
  [`${AUTHZ}ResourceAttributes`]: obj({
    fieldSelector: obj({ rawSelector: str(), requirements: arr(ref(`${META}FieldSelectorRequirement`)) }, { goType: 'v1.FieldSelectorAttributes' }),
    group: str(),
    labelSelector: obj({ rawSelector: str(), requirements: arr(ref(`${META}LabelSelectorRequirement`)) }, { goType: 'v1.LabelSelectorAttributes' }),
    name: str(),
    namespace: str(),
    resource: str(),
    subresource: str(),
    verb: str(),
    version: str(),
  }),
  [`${META}FieldSelectorRequirement`]: obj(
    { key: str(), operator: enumStr('v1.FieldSelectorOperator'), values: arr(str(), { listType: 'atomic' }) },
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
      spec: obj({ namespace: str('Namespace to evaluate rules for.') }, { goType: 'v1.SelfSubjectRulesReviewSpec' }),
      status: obj(
        {
          evaluationError: str(),
          incomplete: bool(),
          nonResourceRules: arr(ref(`${AUTHZ}NonResourceRule`)),
          resourceRules: arr(ref(`${AUTHZ}ResourceRule`)),
        },
        { required: ['resourceRules', 'nonResourceRules', 'incomplete'], goType: 'v1.SubjectRulesReviewStatus' },
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
