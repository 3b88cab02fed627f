/**
 * kube-controller-manager's serviceaccounts controller, run inside the server: every active
 * namespace has a `default` ServiceAccount, made when the namespace is and again whenever it is
 * deleted. A namespace that is Terminating (403) or gone (404) gets none.
 */
import type { KObject } from '../../api/meta.js';
import type { ResourceInfo } from '../../api/resources.js';
import { isConflict, isForbidden, isNotFound } from '../../lib/api-errors.js';
import type { RegistryObserver, Registries } from '../registry/registries.js';

const NAME = 'default';

export class DefaultServiceAccounts implements RegistryObserver {
  constructor(private readonly registries: Registries) {}

  async namespaceCreated(ns: KObject): Promise<void> {
    await this.ensure(ns.metadata?.name ?? '');
  }

  async deleted(obj: KObject, info: ResourceInfo): Promise<void> {
    const namespace = obj.metadata?.namespace;
    if (info.group === '' && info.plural === 'serviceaccounts' && obj.metadata?.name === NAME && namespace) await this.ensure(namespace);
  }

  private async ensure(namespace: string): Promise<void> {
    const sa = this.registries.find('', 'v1', 'serviceaccounts');
    if (!sa) return;
    const obj: KObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NAME, namespace } };
    try {
      await sa.create(namespace, obj, this.registries.systemContext(), { dryRun: false, fieldManager: 'kube-identity' });
    } catch (e) {
      if (!(isForbidden(e) || isNotFound(e) || isConflict(e))) throw e;
    }
  }
}
