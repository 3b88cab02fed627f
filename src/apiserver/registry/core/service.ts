/**
 * core/v1 Services: stored, defaulted and validated as kube-apiserver does for what a user meets
 * (type, ports, cluster IP from the service range, node ports), printed as `kubectl get svc`
 * prints them. Nothing proxies them: there is no kube-proxy, and no Endpoints are kept.
 */
import { isIP } from 'node:net';
import { findResource, type ResourceOf } from '../../../api/resources.js';
import type { Service, ServicePort, ServiceSpec } from '../../../api/services.js';
import { intToIp, ipToInt, kubernetesServiceIp, type ServiceRange } from '../../../lib/service-range.js';
import { errors } from '../../http/errors.js';
import { duplicate, type FieldError, forbidden, invalid, notSupported, required } from '../../http/field-errors.js';
import { isDns1123Label, isDns1123Subdomain } from '../../validation/names.js';
import type { RequestContext, Strategy } from '../generic/strategy.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../generic/table.js';
import { statusOnly } from './pod.js';

const found = findResource('', 'v1', 'services');
if (!found) throw new Error('services missing from RESOURCES');
const info: ResourceOf<Service> = found;

/** kube-apiserver's default --service-node-port-range. */
const NODE_PORTS = { min: 30000, max: 32767 };

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const AFFINITIES = ['ClientIP', 'None'];
/** spec.trafficDistribution: PreferClose, and since 1.33 (GA with PreferSameTrafficDistribution) the two narrower ones. */
const TRAFFIC_DISTRIBUTIONS = ['PreferClose', 'PreferSameNode', 'PreferSameZone'];
const PORT_RANGE = 'must be between 1 and 65535, inclusive';

const inRange = (range: ServiceRange, ip: string): boolean => isIP(ip) === 4 && ipToInt(ip) > range.base && ipToInt(ip) < range.base + range.size - 1;

/** SetDefaults_Service and the REST layer's defaults, before validation. */
function setDefaults(obj: Service): void {
  const spec = obj.spec ?? {};
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  spec.ports = (spec.ports ?? []).map((p) => ({ ...p, protocol: p.protocol ?? 'TCP', targetPort: p.targetPort ?? p.port }));
  if (spec.type !== 'ExternalName') {
    spec.internalTrafficPolicy ??= 'Cluster';
    if (spec.clusterIP !== 'None') {
      spec.ipFamilies ??= ['IPv4'];
      spec.ipFamilyPolicy ??= 'SingleStack';
    }
  }
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  obj.spec = spec;
}

/** IANA_SVC_NAME: a named container port. */
function isPortName(name: string): boolean {
  return name.length <= 15 && /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(name) && /[a-z]/.test(name) && !name.includes('--');
}

const isPort = (n: number | undefined): boolean => n !== undefined && Number.isInteger(n) && n >= 1 && n <= 65535;

function validatePort(p: ServicePort, at: string, type: string | undefined): FieldError[] {
  const errs: FieldError[] = [];
  if (!isPort(p.port)) errs.push(invalid(`${at}.port`, p.port, PORT_RANGE));
  if (!PROTOCOLS.includes(p.protocol ?? '')) errs.push(notSupported(`${at}.protocol`, p.protocol, PROTOCOLS));
  const target = p.targetPort;
  if (typeof target === 'number' ? !isPort(target) : !isPortName(target ?? '')) {
    errs.push(invalid(`${at}.targetPort`, target, typeof target === 'number' ? PORT_RANGE : 'must be a port number or an IANA_SVC_NAME'));
  }
  if (p.nodePort !== undefined && type !== 'NodePort' && type !== 'LoadBalancer') {
    errs.push(forbidden(`${at}.nodePort`, `may not be used when \`type\` is '${type ?? ''}'`));
  }
  return errs;
}

function validatePorts(spec: ServiceSpec): FieldError[] {
  const errs: FieldError[] = [];
  const ports = spec.ports ?? [];
  if (ports.length === 0 && spec.clusterIP !== 'None' && spec.type !== 'ExternalName') errs.push(required('spec.ports'));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const at = `spec.ports[${i}]`;
    const name = p.name ?? '';
    if (ports.length > 1 && name === '') errs.push(required(`${at}.name`));
    else if (name !== '') {
      for (const msg of isDns1123Label(name)) errs.push(invalid(`${at}.name`, name, msg));
      if (names.has(name)) errs.push(duplicate(`${at}.name`, name));
      names.add(name);
    }
    errs.push(...validatePort(p, at, spec.type));
  });
  return errs;
}

function validateTrafficDistribution(spec: ServiceSpec): FieldError[] {
  const value = spec.trafficDistribution;
  return value == null || TRAFFIC_DISTRIBUTIONS.includes(value) ? [] : [notSupported('spec.trafficDistribution', value, TRAFFIC_DISTRIBUTIONS)];
}

function validate(obj: Service): FieldError[] {
  const spec = obj.spec ?? {};
  const errs: FieldError[] = [];
  if (!TYPES.includes(spec.type ?? '')) errs.push(notSupported('spec.type', spec.type, TYPES));
  if (!AFFINITIES.includes(spec.sessionAffinity ?? '')) errs.push(notSupported('spec.sessionAffinity', spec.sessionAffinity, AFFINITIES));
  errs.push(...validateTrafficDistribution(spec));
  const clusterIP = spec.clusterIP ?? '';
  if (spec.type === 'ExternalName') {
    if (!spec.externalName) errs.push(required('spec.externalName'));
    else for (const msg of isDns1123Subdomain(spec.externalName)) errs.push(invalid('spec.externalName', spec.externalName, msg));
    if (clusterIP !== '') errs.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
  } else if (clusterIP !== '' && clusterIP !== 'None' && isIP(clusterIP) === 0) {
    errs.push(invalid('spec.clusterIPs[0]', clusterIP, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
  }
  return [...errs, ...validatePorts(spec)];
}

function allocationError(obj: Service, detail: string): Error {
  const ip = obj.spec?.clusterIP ?? '';
  return errors.invalid('Service', '', obj.metadata?.name ?? '', [invalid('spec.clusterIPs', [ip], detail)]);
}

/**
 * The REST layer's allocation on create (after validation, as upstream's beginCreate): a free
 * cluster IP from the Service range unless one was asked for (then it must be free and in range), and
 * node ports from 30000-32767 for NodePort and LoadBalancer Services.
 */
async function allocate(range: ServiceRange, obj: Service, ctx: RequestContext): Promise<void> {
  const spec = obj.spec ?? {};
  const others = (await ctx.objects.list(info, undefined)).map((s) => s.spec ?? {});
  if (spec.type !== 'ExternalName' && spec.clusterIP !== 'None') {
    const used = new Set(others.map((s) => s.clusterIP ?? ''));
    const asked = spec.clusterIP ?? '';
    if (asked !== '' && !inRange(range, asked)) {
      throw allocationError(obj, `failed to allocate IP ${asked}: the provided IP (${asked}) is not in the valid range. The range of valid IPs is ${range.cidr}`);
    }
    if (asked !== '' && used.has(asked)) throw allocationError(obj, `failed to allocate IP ${asked}: provided IP is already allocated`);
    let ip = asked;
    while (ip === '' || used.has(ip)) ip = intToIp(range.base + 2 + Math.floor(Math.random() * (range.size - 3)));
    spec.clusterIP = ip;
    spec.clusterIPs = [ip];
  }
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
    const taken = new Set(others.flatMap((s) => (s.ports ?? []).map((p) => p.nodePort)));
    spec.ports = (spec.ports ?? []).map((p) => {
      let port = p.nodePort;
      while (port === undefined || taken.has(port)) port = NODE_PORTS.min + Math.floor(Math.random() * (NODE_PORTS.max - NODE_PORTS.min + 1));
      taken.add(port);
      return { ...p, nodePort: port };
    });
  }
}

function externalIP(obj: Service): string {
  const spec = obj.spec ?? {};
  const external = spec.externalIPs ?? [];
  if (spec.type === 'ExternalName') return spec.externalName ?? '';
  if (spec.type === 'LoadBalancer') {
    const ingress = (obj.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '');
    const all = [...ingress, ...external];
    return all.length > 0 ? all.join(',') : '<pending>';
  }
  return external.length > 0 ? external.join(',') : '<none>';
}

function serviceCells(obj: Service, now: Date): unknown[] {
  const spec = obj.spec ?? {};
  const ports = (spec.ports ?? []).map((p) => `${String(p.port)}${p.nodePort ? `:${String(p.nodePort)}` : ''}/${p.protocol ?? ''}`);
  const selector = Object.entries(spec.selector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .sort();
  return [
    obj.metadata?.name ?? '',
    spec.type ?? '',
    spec.clusterIP || '<none>',
    externalIP(obj),
    ports.length > 0 ? ports.join(',') : '<none>',
    ageCell(obj.metadata?.creationTimestamp, now),
    selector.length > 0 ? selector.join(',') : '<none>',
  ];
}

/** Services, with cluster IPs allocated from `range`. */
export function serviceStrategy(range: ServiceRange): Strategy<Service> {
  return {
    info,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    prepareForCreate(obj) {
      setDefaults(obj);
      obj.status = { loadBalancer: {} };
    },
    validate,
    subresources: { status: statusOnly },
    async admit(obj, old, ctx) {
      if (!old) await allocate(range, obj, ctx);
    },
    prepareForUpdate(obj, old) {
      obj.status = old.status;
      const spec = obj.spec ?? {};
      const before = old.spec ?? {};
      // As upstream's patchAllocatedValues: an update that leaves them out keeps what was allocated.
      if (!spec.clusterIP && before.clusterIP && spec.type === before.type) {
        spec.clusterIP = before.clusterIP;
        spec.clusterIPs = before.clusterIPs;
      }
      obj.spec = spec;
      setDefaults(obj);
    },
    validateUpdate(obj, old) {
      const errs = validate(obj);
      const ip = obj.spec?.clusterIP ?? '';
      const was = old.spec?.clusterIP ?? '';
      if (was !== '' && ip !== was) errs.push(invalid('spec.clusterIPs[0]', ip, 'may not change once set'));
      return errs;
    },
    table: {
      columns: [
        NAME_COLUMN,
        column('Type', 'string', 'type determines how the Service is exposed.'),
        column('Cluster-IP', 'string', 'clusterIP is the IP address of the service, allocated from the service CIDR.'),
        column('External-IP', 'string', 'externalIPs or the load balancer ingress points of the service.'),
        column('Port(s)', 'string', 'The list of ports that are exposed by this service.'),
        AGE_COLUMN,
        column('Selector', 'string', 'Route service traffic to pods with label keys and values matching this selector.', 1),
      ],
      cells: serviceCells,
    },
  };
}

/**
 * The `kubernetes` Service in `default`, as kube-apiserver keeps it: the first address of the
 * service range, port 443 (https) to the API server's own port, labelled as upstream labels it.
 */
export function kubernetesService(apiserverPort: number, range: ServiceRange): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: {
      type: 'ClusterIP',
      clusterIP: kubernetesServiceIp(range),
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: apiserverPort }],
      sessionAffinity: 'None',
    },
  };
}
