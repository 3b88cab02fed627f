/**
 * RBAC escalation ("covers") cases ported as data from kubernetes
 * pkg/registry/rbac/validation/policy_comparator_test.go (the TestCovers* functions and TestNonResourceURLCovers):
 * which broken-down parts of a requested rule set the owner's rules leave uncovered.
 */
import { uncoveredRules } from '../../src/apiserver/registry/rbac/escalation.js';
import type { PolicyRule } from '../../src/api/rbac.js';

type R = Partial<PolicyRule>;
const full = (r: R): PolicyRule => ({ verbs: [], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: [], ...r });
const sorted = (rules: PolicyRule[]): string[] => rules.map((r) => JSON.stringify(full(r))).sort();

const g = (apiGroups: string[], verbs: string[], resources: string[], resourceNames?: string[]): R => ({ apiGroups, verbs, resources, ...(resourceNames ? { resourceNames } : {}) });
const urls = (nonResourceURLs: string[], verbs: string[]): R => ({ nonResourceURLs, verbs });

it.each<[string, R[], R[], R[]]>([
  ['TestCoversExactMatch', [g(['v1'], ['get'], ['builds'])], [g(['v1'], ['get'], ['builds'])], []],
  [
    'TestCoversMultipleRulesCoveringSingleRule',
    [g(['v1'], ['delete'], ['deployments']), g(['v1'], ['delete'], ['builds']), g(['v1'], ['update'], ['builds', 'deployments'])],
    [g(['v1'], ['delete', 'update'], ['builds', 'deployments'])],
    [],
  ],
  [
    'TestCoversMultipleAPIGroupsCoveringSingleRule',
    ['group1', 'group2'].flatMap((grp) => [g([grp], ['delete'], ['deployments']), g([grp], ['delete'], ['builds']), g([grp], ['update'], ['builds', 'deployments'])]),
    [g(['group1', 'group2'], ['delete', 'update'], ['builds', 'deployments'])],
    [],
  ],
  [
    'TestCoversSingleAPIGroupsCoveringMultiple',
    [g(['group1', 'group2'], ['delete', 'update'], ['builds', 'deployments'])],
    ['group1', 'group2'].flatMap((grp) => [g([grp], ['delete'], ['deployments']), g([grp], ['delete'], ['builds']), g([grp], ['update'], ['builds', 'deployments'])]),
    [],
  ],
  [
    'TestCoversMultipleRulesMissingSingleVerbResourceCombination',
    [g(['v1'], ['delete', 'update'], ['builds', 'deployments']), g(['v1'], ['delete'], ['pods'])],
    [g(['v1'], ['delete', 'update'], ['builds', 'deployments', 'pods'])],
    [g(['v1'], ['update'], ['pods'])],
  ],
  ['TestCoversAPIGroupStarCoveringMultiple', [g(['*'], ['get'], ['roles'])], [g(['group1', 'group2'], ['get'], ['roles'])], []],
  ['TestCoversEnumerationNotCoveringAPIGroupStar', [g(['dummy-group'], ['get'], ['roles'])], [g(['*'], ['get'], ['roles'])], [g(['*'], ['get'], ['roles'])]],
  ['TestCoversAPIGroupStarCoveringStar', [g(['*'], ['get'], ['roles'])], [g(['*'], ['get'], ['roles'])], []],
  ['TestCoversVerbStarCoveringMultiple', [g(['v1'], ['*'], ['roles'])], [g(['v1'], ['watch', 'list'], ['roles'])], []],
  [
    'TestCoversEnumerationNotCoveringVerbStar',
    [g(['v1'], ['get', 'list', 'watch', 'create', 'update', 'delete', 'exec'], ['roles'])],
    [g(['v1'], ['*'], ['roles'])],
    [g(['v1'], ['*'], ['roles'])],
  ],
  ['TestCoversVerbStarCoveringStar', [g(['v1'], ['*'], ['roles'])], [g(['v1'], ['*'], ['roles'])], []],
  ['TestCoversResourceStarCoveringMultiple', [g(['v1'], ['get'], ['*'])], [g(['v1'], ['get'], ['resourcegroup:deployments'])], []],
  [
    'TestCoversEnumerationNotCoveringResourceStar',
    [g(['v1'], ['get'], ['roles', 'resourcegroup:deployments'])],
    [g(['v1'], ['get'], ['*'])],
    [g(['v1'], ['get'], ['*'])],
  ],
  ['TestCoversResourceStarCoveringStar', [g(['v1'], ['get'], ['*'])], [g(['v1'], ['get'], ['*'])], []],
  ['TestCoversResourceNameEmptyCoveringMultiple', [g(['v1'], ['get'], ['pods'], [])], [g(['v1'], ['get'], ['pods'], ['foo', 'bar'])], []],
  [
    'TestCoversEnumerationNotCoveringResourceNameEmpty',
    [g(['v1'], ['get'], ['pods'], ['foo', 'bar'])],
    [g(['v1'], ['get'], ['pods'], [])],
    [g(['v1'], ['get'], ['pods'])],
  ],
  ['TestCoversNonResourceURLs', [urls(['/apis'], ['*'])], [urls(['/apis'], ['*'])], []],
  ['TestCoversNonResourceURLsStar', [urls(['*'], ['*'])], [urls(['/apis', '/apis/v1', '/'], ['*'])], []],
  ['TestCoversNonResourceURLsStarAfterPrefixDoesntCover', [urls(['/apis/*'], ['*'])], [urls(['/apis', '/apis/v1'], ['get'])], [urls(['/apis'], ['get'])]],
  ['TestCoversNonResourceURLsStarAfterPrefix', [urls(['/apis/*'], ['*'])], [urls(['/apis/v1/foo', '/apis/v1'], ['get'])], []],
  [
    'TestCoversNonResourceURLsWithOtherFields',
    [{ ...g(['v1'], ['get'], ['builds']), nonResourceURLs: ['/apis'] }],
    [{ ...g(['v1'], ['get'], ['builds']), nonResourceURLs: ['/apis'] }],
    [],
  ],
  [
    'TestCoversNonResourceURLsWithOtherFieldsFailure',
    [g(['v1'], ['get'], ['builds'])],
    [{ ...g(['v1'], ['get'], ['builds']), nonResourceURLs: ['/apis'] }],
    [urls(['/apis'], ['get'])],
  ],
])('%s', (_name, owner, servant, uncovered) => {
  expect(sorted(uncoveredRules(owner.map(full), servant.map(full)))).toEqual(sorted(uncovered.map(full)));
});

it.each<[string, string, boolean]>([
  ['*', '/api', true],
  ['/api', '/api', true],
  ['/apis', '/api', false],
  ['/api/v1', '/api', false],
  ['/api/v1', '/api/v1', true],
  ['/api/*', '/api/v1', true],
  ['/api/*', '/api', false],
  ['/api/*/*', '/api/v1', false],
  ['/*/v1/*', '/api/v1', false],
])('TestNonResourceURLCovers: %j covers %j: %s', (owner, requested, covers) => {
  const left = uncoveredRules([full(urls([owner], ['get']))], [full(urls([requested], ['get']))]);
  expect(left.length === 0).toBe(covers);
});
