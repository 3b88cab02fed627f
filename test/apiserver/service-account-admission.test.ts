/**
 * ServiceAccount admission as kube-apiserver's: a pod naming a ServiceAccount that does not exist is
 * refused with upstream's 403, dry run or not, and admitted once the account is made. A new
 * namespace's first pod is admitted even while its `default` account is still being made: the
 * plugin looks for that one again, as upstream's does, until the controller has made it.
 */
import type { KObject } from '../../src/api/meta.js';
import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';
import { storageKey, type StoredObject, type StoreWriteOptions } from '../../src/apiserver/storage/store.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kubectlFor, kubectlWith, type KubectlResult } from '../kubectl/kubectl.js';

/** The store of a server whose controller is slow to make the `late` namespace's default ServiceAccount. */
class LateDefaultAccount extends MemoryStore {
  static readonly KEY = storageKey('', 'serviceaccounts', 'late', 'default');
  private letGo: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.letGo = resolve));
  private held: () => void = () => undefined;
  /** Resolves once the controller's create of the account waits at the gate. */
  readonly creating = new Promise<void>((resolve) => (this.held = resolve));
  private seen: (() => void) | undefined;

  override async create(key: string, object: KObject, options?: StoreWriteOptions): Promise<StoredObject> {
    if (key === LateDefaultAccount.KEY) {
      this.held();
      await this.gate;
    }
    return super.create(key, object, options);
  }

  override get(key: string): Promise<StoredObject | undefined> {
    if (key === LateDefaultAccount.KEY) this.seen?.();
    return super.get(key);
  }

  /** Resolves when the account is next read. */
  nextRead(): Promise<void> {
    return new Promise((resolve) => (this.seen = resolve));
  }

  makeAccount(): void {
    this.letGo();
  }
}

let s: TestServer;
let store: LateDefaultAccount;
let kubectl: (...args: string[]) => Promise<KubectlResult>;
beforeAll(async () => {
  store = new LateDefaultAccount();
  s = await startTestServer({ store });
  kubectl = kubectlFor(s);
});
afterAll(async () => {
  await s.close();
});

const pod = (name: string, serviceAccountName?: string): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { ...(serviceAccountName && { serviceAccountName }), containers: [{ name: 'c', image: 'busybox' }] },
});
const pods = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;

describe('ServiceAccount admission', () => {
  it('refuses a pod naming a missing ServiceAccount with upstream 403, then admits it once the account exists', async () => {
    expect((await kubectl('create', 'namespace', 'team')).code).toBe(0);
    const refused = await raw(s, 'POST', pods('team'), { body: pod('web', 'bot') });
    expect([refused.status, refused.json]).toEqual([
      403,
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'pods "web" is forbidden: error looking up service account team/bot: serviceaccount "bot" not found',
        reason: 'Forbidden',
        details: { name: 'web', kind: 'pods' },
        code: 403,
      },
    ]);
    const dryRun = await raw(s, 'POST', `${pods('team')}?dryRun=All`, { body: pod('web', 'bot') });
    expect([dryRun.status, dryRun.json.message]).toEqual([403, refused.json.message]);

    const run = await kubectl('run', 'web', '-n', 'team', '--image=busybox', '--overrides={"spec":{"serviceAccountName":"bot"}}');
    expect([run.code, run.stderr.trim()]).toEqual([
      1,
      'Error from server (Forbidden): pods "web" is forbidden: error looking up service account team/bot: serviceaccount "bot" not found',
    ]);

    expect((await kubectl('create', 'serviceaccount', 'bot', '-n', 'team')).code).toBe(0);
    const admitted = await raw(s, 'POST', pods('team'), { body: pod('web', 'bot') });
    expect([admitted.status, admitted.json.spec.serviceAccountName]).toEqual([201, 'bot']);
  });

  it('admits pods running as default, in the default namespace and in a new one', async () => {
    expect((await kubectl('run', 'first', '--image=busybox')).code).toBe(0);
    expect((await kubectl('create', 'namespace', 'fresh')).code).toBe(0);
    const run = await kubectlWith(s, ['run', 'first', '-n', 'fresh', '--image=busybox']);
    expect([run.code, run.stdout.trim()]).toEqual([0, 'pod/first created']);
    expect((await raw(s, 'GET', `${pods('fresh')}/first`)).json.spec.serviceAccountName).toBe('default');
  });

  it('waits for a default ServiceAccount the controller has not made yet', async () => {
    const namespaceCreate = raw(s, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'late' } } });
    await store.creating;
    expect((await raw(s, 'GET', '/api/v1/namespaces/late')).status).toBe(200);
    expect((await raw(s, 'GET', '/api/v1/namespaces/late/serviceaccounts/default')).status).toBe(404);

    const read = store.nextRead();
    const podCreate = raw(s, 'POST', pods('late'), { body: pod('early') });
    await Promise.race([read, podCreate]);
    store.makeAccount();
    const [ns, created] = await Promise.all([namespaceCreate, podCreate]);
    expect([ns.status, created.status, created.json.spec.serviceAccountName]).toEqual([201, 201, 'default']);
  });
});
