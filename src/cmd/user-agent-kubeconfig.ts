/**
 * A KubeConfig whose API clients send kube-identity's User-Agent (client-go's form with the tool's
 * name, src/lib/user-agent.ts) in place of client-node's `kubernetes-client-javascript/<version>`,
 * so the audit log tells the tool's requests apart: `kube-identity demo` plays a kubelet with it.
 */
import { createConfiguration, KubeConfig, ServerConfiguration, type ApiConstructor, type ApiType, type RequestContext, type ResponseContext } from '@kubernetes/client-node';

export class UserAgentKubeConfig extends KubeConfig {
  constructor(readonly userAgent: string) {
    super();
  }

  /** As KubeConfig's, with the User-Agent set on every request. */
  override makeApiClient<T extends ApiType>(apiClientType: ApiConstructor<T>): T {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw new Error('No active cluster!');
    const userAgent = this.userAgent;
    const pre = (ctx: RequestContext): Promise<RequestContext> => {
      ctx.setHeaderParam('User-Agent', userAgent);
      return Promise.resolve(ctx);
    };
    const post = (res: ResponseContext): Promise<ResponseContext> => Promise.resolve(res);
    return new apiClientType(createConfiguration({ baseServer: new ServerConfiguration(cluster.server, {}), authMethods: { default: this }, promiseMiddleware: [{ pre, post }] }));
  }
}
