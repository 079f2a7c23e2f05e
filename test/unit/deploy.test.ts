/**
 * Static checks of the deployment files: they parse, and they keep the promises the README and
 * docs/architecture.md make (who may reach whom, probes, persistence flags, what each workload
 * can read). No processes are started. This is not a
 * Kubernetes schema validation (no validator with the Kubernetes schemas is installed; see
 * deploy/k8s/README.md).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateDevCertificates } from '@tessera/protos';
import { parseAllDocuments, parse } from 'yaml';
import { parseGatewayConfig } from '../../services/gateway/src/config';
import { parseAdminConfig } from '../../services/admin/src/config';
import { parseFieldsConfig } from '../../services/fields/src/config';
import { drainDeadlineMs } from '../../packages/edge/src/transport/drain';
import { ROOT } from '@tessera/stack';
import { CARD_IMPORT_CREATE_QUEUE_KEY, CARD_IMPORT_QUEUE_KEY, cardImportKey, type CardImportPart } from '@tessera/merchant-data';

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec?: any };

const K8S_DIR = path.join(ROOT, 'deploy', 'k8s');
const docs: Doc[] = fs
  .readdirSync(K8S_DIR)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    parseAllDocuments(fs.readFileSync(path.join(K8S_DIR, f), 'utf8')).map((d) => {
      if (d.errors.length > 0) throw new Error(`${f}: ${d.errors.map((e) => e.message).join('; ')}`);
      return d.toJS() as Doc;
    }),
  );
const find = (kind: string, name: string): Doc => {
  const doc = docs.find((d) => d.kind === kind && d.metadata.name === name);
  if (!doc) throw new Error(`no ${kind} ${name}`);
  return doc;
};

const KNOWN: Record<string, string> = {
  Namespace: 'v1',
  ServiceAccount: 'v1',
  Service: 'v1',
  Deployment: 'apps/v1',
  StatefulSet: 'apps/v1',
  NetworkPolicy: 'networking.k8s.io/v1',
  HorizontalPodAutoscaler: 'autoscaling/v2',
  PodDisruptionBudget: 'policy/v1',
};

const envOf = (deployment: string): Record<string, string> =>
  Object.fromEntries(find('Deployment', deployment).spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));

describe('Kubernetes manifests (deploy/k8s)', () => {
  it('parse, use known kinds and API versions, and live in the tessera namespace', () => {
    expect(docs.length).toBeGreaterThan(8);
    for (const doc of docs) {
      expect(KNOWN[doc.kind]).toBe(doc.apiVersion);
      if (doc.kind !== 'Namespace') expect(doc.metadata.namespace).toBe('tessera');
    }
  });

  it('give every container probes, resource requests, a memory limit and a locked-down security context; secrets only from Secrets', () => {
    for (const doc of docs.filter((d) => d.kind === 'Deployment' || d.kind === 'StatefulSet')) {
      const pod = doc.spec.template.spec;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(doc.spec.selector.matchLabels).toEqual(doc.spec.template.metadata.labels);
      for (const c of pod.containers) {
        expect(c.readinessProbe).toBeDefined();
        expect(c.livenessProbe).toBeDefined();
        expect(c.resources.requests.cpu).toBeDefined();
        expect(c.resources.limits.memory).toBeDefined();
        expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
        for (const e of c.env ?? []) {
          if (['VAULT_KEYS', 'API_KEY_PEPPER'].includes(e.name)) expect(e.valueFrom.secretKeyRef).toBeDefined();
        }
      }
    }
  });

  it('give the gateway a preStop pause and a grace period longer than that pause plus its whole drain', () => {
    const pod = find('Deployment', 'gateway').spec.template.spec;
    const container = pod.containers[0];
    const preStop = container.lifecycle.preStop.exec.command as string[];
    expect(preStop[0]).toBe('sleep');
    const proxyTimeoutMs = Number(container.env.find((e: any) => e.name === 'PROXY_TIMEOUT_MS')?.value ?? 40_000);
    const neededSeconds = Number(preStop[1]) + drainDeadlineMs(proxyTimeoutMs) / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(neededSeconds);
  });

  it('run the services in production, those that speak gRPC with mTLS, and the vault with an acknowledged write level', () => {
    for (const name of TLS_SERVICES) {
      expect({ name, env: envOf(name) }).toMatchObject({ name, env: { NODE_ENV: 'production', TLS_CERT_FILE: '/certs/tls.crt' } });
    }
    // The admin service dials Redis only, over TLS: it has no certificate of its own to present.
    expect(envOf('admin')).toMatchObject({ NODE_ENV: 'production', REDIS_TLS_CA_FILE: '/certs/ca.crt' });
    const vaultEnv = find('Deployment', 'vault').spec.template.spec.containers[0].env;
    expect(vaultEnv).toContainEqual({ name: 'VAULT_WRITE_ACK', value: 'aof' });
    expect(find('StatefulSet', 'redis').spec.template.spec.containers[0].args.join(' ')).toMatch(
      /--appendonly yes --appendfsync always --maxmemory-policy noeviction/,
    );
  });

  it('run each workload under a ServiceAccount of its own, with no API token mounted', () => {
    for (const name of SERVICES) {
      const pod = podOf(name);
      expect({ name, account: pod.serviceAccountName }).toEqual({ name, account: name });
      expect(find('ServiceAccount', name)).toMatchObject({ automountServiceAccountToken: false });
      expect(pod.automountServiceAccountToken).toBe(false);
    }
  });

  it('put the vault in its own network policy: ingress from gateway, proxy and fields only, egress to Redis (and DNS) only', () => {
    expect(find('NetworkPolicy', 'default-deny').spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const vault = find('NetworkPolicy', 'vault').spec;
    expect(vault.podSelector).toEqual({ matchLabels: { app: 'vault' } });
    expect(vault.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(vault.ingress).toHaveLength(1);
    expect(vault.ingress[0].from).toEqual([
      { podSelector: { matchLabels: { app: 'gateway' } } },
      { podSelector: { matchLabels: { app: 'proxy' } } },
      { podSelector: { matchLabels: { app: 'fields' } } },
      { podSelector: { matchLabels: { app: 'inbound' } } },
    ]);
    expect(vault.ingress[0].ports).toEqual([{ protocol: 'TCP', port: 50051 }]);
    expect(vault.egress).toHaveLength(2);
    expect(vault.egress[0]).toEqual({ to: [{ podSelector: { matchLabels: { app: 'redis' } } }], ports: [{ protocol: 'TCP', port: 6379 }] });
    // The only other egress is cluster DNS on port 53: no ipBlock, nothing outside the cluster.
    expect(vault.egress[1].to[0].podSelector).toEqual({ matchLabels: { 'k8s-app': 'kube-dns' } });
    expect(vault.egress[1].ports.map((p: any) => p.port)).toEqual([53, 53]);
    expect(JSON.stringify(vault)).not.toContain('ipBlock');
  });

  it('give every workload a network policy of its own, both ways', () => {
    for (const name of [...SERVICES, 'redis']) {
      const policy = find('NetworkPolicy', name).spec;
      expect({ name, selector: policy.podSelector }).toEqual({ name, selector: { matchLabels: { app: name } } });
      expect(policy.policyTypes).toEqual(['Ingress', 'Egress']);
    }
  });

  it("let the admin service reach only Redis (and DNS), from the operators' namespaces only", () => {
    const admin = find('NetworkPolicy', 'admin').spec;
    expect(egressTargets('admin')).toEqual(['redis:6379', 'dns']);
    expect(admin.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'tessera/admin-access': 'true' } } }],
        ports: [{ protocol: 'TCP', port: Number(envOf('admin').ADMIN_PORT) }],
      },
    ]);
    expect(README).toContain('kubectl label namespace');
    expect(README).toContain('tessera/admin-access=true');
    // No other pod's policy lets it in either: nothing names the admin pods as a destination.
    for (const name of SERVICES.filter((n) => n !== 'admin')) expect({ name, targets: egressTargets(name) }).not.toContain('admin');
  });

  it('let the fields service reach only Redis, the vault and the proxy (and DNS), and be reached on its own port only', () => {
    // The proxy for hosted pages' completion calls: its caller policy lets the fields identity make that call only.
    expect(egressTargets('fields')).toEqual(['vault:50051', 'proxy:50052', 'redis:6379', 'dns']);
    const ingress = find('NetworkPolicy', 'fields').spec.ingress as any[];
    expect(ingress).toEqual([{ ports: [{ protocol: 'TCP', port: Number(envOf('fields').FIELDS_PORT) }] }]);
  });

  it('let the inbound service reach only Redis, the vault and the proxy (and DNS): no internet, its upstreams through the proxy', () => {
    expect(egressTargets('inbound')).toEqual(['vault:50051', 'proxy:50052', 'redis:6379', 'dns']);
    const ingress = find('NetworkPolicy', 'inbound').spec.ingress as any[];
    expect(ingress).toEqual([{ ports: [{ protocol: 'TCP', port: Number(envOf('inbound').INBOUND_PORT) }] }]);
    expect(envOf('proxy').TLS_PEER_INBOUND).toBe('inbound');
  });

  it('let only the services with a Redis user reach Redis, and only the gateway and the fields service the proxy', () => {
    const from = (name: string) =>
      find('NetworkPolicy', name).spec.ingress.flatMap((r: any) => r.from.map((f: any) => f.podSelector.matchLabels.app));
    expect(from('redis')).toEqual(['vault', 'gateway', 'admin', 'fields', 'inbound']);
    expect(from('proxy')).toEqual(['gateway', 'fields', 'inbound']);
    // The gateway serves the API and the forward proxy only: no dashboard or fields port to admit any more.
    expect(find('NetworkPolicy', 'gateway').spec.ingress).toEqual([
      {
        ports: [
          { protocol: 'TCP', port: Number(envOf('gateway').PORT) },
          { protocol: 'TCP', port: Number(envOf('gateway').FORWARD_PROXY_PORT) },
        ],
      },
    ]);
    expect(egressTargets('gateway')).toEqual(['vault:50051', 'proxy:50052', 'redis:6379', 'dns']);
  });

  it('let only the proxy reach the internet, and not private ranges', () => {
    const withIpBlock = docs.filter((d) => d.kind === 'NetworkPolicy' && JSON.stringify(d.spec).includes('ipBlock'));
    expect(withIpBlock.map((d) => d.metadata.name)).toEqual(['proxy']);
    const block = find('NetworkPolicy', 'proxy').spec.egress.find((e: any) => e.to[0].ipBlock).to[0].ipBlock;
    expect(block.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']));
  });
});

describe('Kubernetes manifests: scale-out (docs/scaling.md)', () => {
  const HEADLESS = { vault: 50051, proxy: 50052 } as const;

  it('give the vault and the proxy headless Services, which the gateway, the proxy and the fields dial with dns:///', () => {
    for (const [name, port] of Object.entries(HEADLESS)) {
      const headless = find('Service', `${name}-headless`).spec;
      expect(headless.clusterIP).toBe('None');
      expect(headless.selector).toEqual({ app: name });
      expect(headless.ports.map((p: any) => p.port)).toEqual([port]);
    }
    const target = (name: keyof typeof HEADLESS) => `dns:///${name}-headless.tessera.svc.cluster.local:${HEADLESS[name]}`;
    expect(envOf('gateway')).toMatchObject({ VAULT_ADDR: target('vault'), PROXY_ADDR: target('proxy') });
    expect(envOf('proxy')).toMatchObject({ VAULT_ADDR: target('vault') });
    expect(envOf('fields')).toMatchObject({ VAULT_ADDR: target('vault'), PROXY_ADDR: target('proxy') });
  });

  it('scale every Deployment with a CPU HorizontalPodAutoscaler of at least two replicas, which alone sets the count', () => {
    expect(
      docs
        .filter((d) => d.kind === 'Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual([...SERVICES].sort());
    for (const name of SERVICES) {
      const deployment = find('Deployment', name);
      // A replicas field would be re-applied over the autoscaler's choice on every kubectl apply.
      expect(deployment.spec.replicas).toBeUndefined();
      const hpa = find('HorizontalPodAutoscaler', name).spec;
      expect(hpa.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.maxReplicas).toBeGreaterThan(hpa.minReplicas);
      expect(hpa.metrics).toEqual([
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } } },
      ]);
      // Utilization is of the request: without one the autoscaler has nothing to measure against.
      expect(deployment.spec.template.spec.containers[0].resources.requests.cpu).toBeDefined();
    }
  });

  it('let a node drain evict one replica of each service at a time, so it never takes the last vault', () => {
    for (const name of SERVICES) {
      const pdb = find('PodDisruptionBudget', name).spec;
      expect(pdb.selector.matchLabels).toEqual(find('Deployment', name).spec.template.metadata.labels);
      expect(pdb.maxUnavailable).toBe(1);
      expect(find('HorizontalPodAutoscaler', name).spec.minReplicas).toBeGreaterThan(pdb.maxUnavailable);
    }
  });
});

/*
 * The hosted card fields (docs/browser.md): the documented production deployment must serve them,
 * or browser card collection does not work at all. They are the fields service's now, on a
 * workload and an origin of their own; the gateway serves /v1 only.
 */
describe('Kubernetes manifests: hosted card fields (docs/browser.md)', () => {
  const fieldsContainer = () => podOf('fields').containers[0];
  const fieldsPort = () => Number(envOf('fields').FIELDS_PORT);
  /** The origins the README's `kubectl create configmap tessera-gateway-origins` gives. */
  const readmeOrigins = (): Record<string, string> => {
    const command = /create configmap tessera-gateway-origins((?: \\\n|[^\n])*)/.exec(README)?.[1] ?? '';
    return Object.fromEntries([...command.matchAll(/--from-literal=(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
  };

  it('run the fields service on a container port of its own, bound to the pod address, as docker compose does', () => {
    const env = envOf('fields');
    expect(fieldsPort()).toBeGreaterThan(0);
    // Service traffic arrives at the pod's address: the default 127.0.0.1 would refuse it.
    expect(env.FIELDS_BIND).toBe('0.0.0.0');
    expect(fieldsContainer().ports).toContainEqual({ name: 'fields', containerPort: fieldsPort() });
    expect({ FIELDS_PORT: env.FIELDS_PORT, FIELDS_BIND: env.FIELDS_BIND }).toEqual({
      FIELDS_PORT: compose.services.fields.environment.FIELDS_PORT,
      FIELDS_BIND: compose.services.fields.environment.FIELDS_BIND,
    });
  });

  it('expose the fields on a Service of their own over the fields pods, apart from the API', () => {
    const targets = (name: string): number[] => find('Service', name).spec.ports.map((p: any) => p.targetPort);
    const fields = find('Service', 'fields').spec;
    expect(fields.selector).toEqual(find('Deployment', 'fields').spec.template.metadata.labels);
    expect(fields.type).toBe(find('Service', 'gateway').spec.type);
    expect(targets('fields')).toEqual([fieldsPort()]);
    expect(fields.ports[0].name).toBe('fields');
    // Two origins: the API's Service does not serve the fields, nor the fields' the API.
    expect(targets('gateway')).toEqual([Number(envOf('gateway').PORT)]);
    expect(docs.filter((d) => d.kind === 'Service' && d.spec.selector?.app === 'gateway').map((d) => d.metadata.name)).toEqual([
      'gateway',
      'forward-proxy',
    ]);
  });

  it("take FIELDS_ORIGIN (fields and gateway) and API_ORIGIN (gateway) from the operator's ConfigMap, which the README creates with https origins", () => {
    const fromConfigMap = (name: string, variable: string) => (podOf(name).containers[0].env as any[]).find((e) => e.name === variable);
    for (const [name, variable] of [
      ['fields', 'FIELDS_ORIGIN'],
      ['gateway', 'FIELDS_ORIGIN'],
      ['gateway', 'API_ORIGIN'],
    ] as const) {
      // Not optional: without the operator's origins the pod must not start.
      expect({ name, env: fromConfigMap(name, variable) }).toEqual({
        name,
        env: { name: variable, valueFrom: { configMapKeyRef: { name: 'tessera-gateway-origins', key: variable } } },
      });
    }
    const origins = readmeOrigins();
    expect(Object.keys(origins).sort()).toEqual(['API_ORIGIN', 'FIELDS_ORIGIN']);
    expect(new URL(origins.FIELDS_ORIGIN!).protocol).toBe('https:');
    expect(new URL(origins.FIELDS_ORIGIN!).host).not.toBe(new URL(origins.API_ORIGIN!).host);
  });

  it("give the gateway an environment its production configuration check accepts, at the operator's origins", () => {
    const origins = readmeOrigins();
    expect(podOf('gateway').containers[0].volumeMounts).toContainEqual({ name: 'certs', mountPath: '/certs', readOnly: true });
    const config = withResolvedEnv('gateway', origins, parseGatewayConfig);
    expect(config.NODE_ENV).toBe('production');
    // The gateway names the fields origin in a form session's page URL (the fields now run in services/fields).
    expect(config.FIELDS_ORIGIN).toBe(origins.FIELDS_ORIGIN);
  });

  it("give the fields service an environment its production configuration check accepts, at the operator's origin", () => {
    const config = withResolvedEnv('fields', readmeOrigins(), parseFieldsConfig);
    expect(config).toMatchObject({ NODE_ENV: 'production', FIELDS_PORT: fieldsPort(), FIELDS_ORIGIN: readmeOrigins().FIELDS_ORIGIN });
  });

  it('leave the gateway no dashboard or fields listener, in Kubernetes and in compose', () => {
    const gone = ['ADMIN_PORT', 'ADMIN_BIND', 'FIELDS_PORT', 'FIELDS_BIND'];
    expect(Object.keys(envOf('gateway')).filter((n) => gone.includes(n))).toEqual([]);
    expect(Object.keys(compose.services.gateway.environment).filter((n) => gone.includes(n))).toEqual([]);
    expect(podOf('gateway').containers[0].ports.map((p: any) => p.name)).toEqual(['http', 'forward-proxy', 'metrics']);
    expect(compose.services.gateway.ports).toEqual(['8080:8080', '8084:8084']);
  });

  it('keep the fields and admin pods out of their Services until /readyz answers on their own port, and restart them on /healthz', () => {
    for (const [name, port] of [
      ['fields', fieldsPort()],
      ['admin', Number(envOf('admin').ADMIN_PORT)],
    ] as const) {
      const c = podOf(name).containers[0];
      expect({ name, probe: c.readinessProbe.httpGet }).toEqual({ name, probe: { path: '/readyz', port } });
      expect({ name, probe: c.livenessProbe.httpGet }).toEqual({ name, probe: { path: '/healthz', port } });
      // The endpoint removal reaches the load balancer before SIGTERM, and the drain has time.
      expect(c.lifecycle.preStop.exec.command[0]).toBe('sleep');
      expect(podOf(name).terminationGracePeriodSeconds).toBeGreaterThan(Number(c.lifecycle.preStop.exec.command[1]) + 10);
    }
  });
});

/*
 * Issue 28 (docs/proxies.md): the forward proxy on the gateway's FORWARD_PROXY_PORT and the inbound
 * routes on the inbound service's INBOUND_PORT, reachable by merchants' servers, forms and partners.
 */
describe('Kubernetes manifests and compose: the forward proxy and inbound routes', () => {
  const OPERATIONS = fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');

  it('serve the forward proxy on the gateway pods, on a port of its own, in Kubernetes and in compose alike', () => {
    const port = Number(envOf('gateway').FORWARD_PROXY_PORT);
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(Number(envOf('gateway').PORT));
    expect(compose.services.gateway.environment.FORWARD_PROXY_PORT).toBe(String(port));
    expect(compose.services.gateway.ports).toContain(`${port}:${port}`);
    expect(podOf('gateway').containers[0].ports).toContainEqual({ name: 'forward-proxy', containerPort: port });
    // The production configuration check takes it as a port of its own.
    const config = withResolvedEnv(
      'gateway',
      { FIELDS_ORIGIN: 'https://fields.example', API_ORIGIN: 'https://api.example' },
      parseGatewayConfig,
    );
    expect(config.FORWARD_PROXY_PORT).toBe(port);
  });

  it('expose the forward proxy on a TCP Service of its own over the gateway pods, which the network policy admits', () => {
    const port = Number(envOf('gateway').FORWARD_PROXY_PORT);
    const service = find('Service', 'forward-proxy').spec;
    expect(service.selector).toEqual(find('Deployment', 'gateway').spec.template.metadata.labels);
    expect(service.type).toBe('LoadBalancer');
    expect(service.ports).toEqual([{ name: 'forward-proxy', port, targetPort: port, protocol: 'TCP' }]);
    const admitted = (find('NetworkPolicy', 'gateway').spec.ingress as any[]).flatMap((rule) => rule.ports.map((p: any) => p.port));
    expect(admitted).toContain(port);
    // From anywhere a merchant's server is, as for the API: the key's IP allowlist says who.
    for (const rule of find('NetworkPolicy', 'gateway').spec.ingress as any[]) expect(rule.from).toBeUndefined();
  });

  it('expose the inbound service on a Service of its own over the inbound pods, bound to the pod address, as compose does', () => {
    const env = envOf('inbound');
    const port = Number(env.INBOUND_PORT);
    expect(env.INBOUND_BIND).toBe('0.0.0.0');
    expect({ INBOUND_PORT: env.INBOUND_PORT, INBOUND_BIND: env.INBOUND_BIND }).toEqual({
      INBOUND_PORT: compose.services.inbound.environment.INBOUND_PORT,
      INBOUND_BIND: compose.services.inbound.environment.INBOUND_BIND,
    });
    expect(compose.services.inbound.ports).toEqual([`${port}:${port}`]);
    expect(podOf('inbound').containers[0].ports).toContainEqual({ name: 'inbound', containerPort: port });
    const service = find('Service', 'inbound').spec;
    expect(service.selector).toEqual(find('Deployment', 'inbound').spec.template.metadata.labels);
    expect(service.type).toBe(find('Service', 'gateway').spec.type);
    expect(service.ports.map((p: any) => p.targetPort)).toEqual([port]);
    expect(docs.filter((d) => d.kind === 'Service' && d.spec.selector?.app === 'inbound').map((d) => d.metadata.name)).toEqual(['inbound']);
    const c = podOf('inbound').containers[0];
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port });
  });

  it('say in the operations guide and the Kubernetes README how to expose both', () => {
    for (const text of [OPERATIONS, README]) {
      expect(text).toContain('forward-proxy');
      expect(text).toContain('FORWARD_PROXY_PORT');
      expect(text).toContain('INBOUND_PORT');
      expect(text).toContain('/v1/forward-proxy/ca.pem');
    }
  });
});

/*
 * The admin service: the dashboard, the admin API and the CLIs, outside the card data environment.
 */
describe('Kubernetes manifests and compose: the admin service', () => {
  const adminPort = () => Number(envOf('admin').ADMIN_PORT);

  it('serves the dashboard on a port of its own, bound to the pod address, behind a ClusterIP Service only', () => {
    expect(envOf('admin')).toMatchObject({ ADMIN_BIND: '0.0.0.0' });
    expect(adminPort()).toBeGreaterThan(0);
    expect(podOf('admin').containers[0].ports).toContainEqual({ name: 'http', containerPort: adminPort() });
    const service = find('Service', 'admin').spec;
    expect(service.type).toBe('ClusterIP');
    expect(service.selector).toEqual({ app: 'admin' });
    expect(service.ports.map((p: any) => p.targetPort)).toEqual([adminPort()]);
    // Compose publishes it on the host's loopback only, as the README tells operators to reach it.
    expect(compose.services.admin.environment).toMatchObject({ ADMIN_PORT: String(adminPort()), ADMIN_BIND: '0.0.0.0' });
    expect(compose.services.admin.ports).toEqual([`127.0.0.1:${adminPort()}:${adminPort()}`]);
  });

  it('gives the admin service an environment its production configuration check accepts', () => {
    const config = withResolvedEnv('admin', {}, parseAdminConfig);
    expect(config).toMatchObject({ NODE_ENV: 'production', ADMIN_PORT: adminPort(), ADMIN_BIND: '0.0.0.0' });
  });

  it('configures no vault or proxy address and no certificate of its own at all, in Kubernetes and in compose', () => {
    const forbidden = /^(VAULT_|PROXY_|TLS_CERT_FILE|TLS_KEY_FILE|TLS_CA_FILE|PKCS11_)/;
    expect(Object.keys(envOf('admin')).filter((n) => forbidden.test(n))).toEqual([]);
    expect(Object.keys(compose.services.admin.environment).filter((n) => forbidden.test(n))).toEqual([]);
    expect(JSON.stringify(compose.services.admin)).not.toMatch(/vault|proxy/);
    expect(compose.services.admin.depends_on).toEqual({ redis: { condition: 'service_healthy' } });
  });

  it('runs the CLIs the README and compose name from the admin service', () => {
    expect(README).toContain('exec deploy/admin -- node services/admin/dist/cli/keys.js');
    expect(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')).toContain('exec admin node services/admin/dist/cli/keys.js');
  });
});

describe('docker-compose.yml', () => {
  it('health-checks every service and starts each only after what it needs is healthy', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect({ name, test: service.healthcheck?.test?.[0] }).toEqual({ name, test: 'CMD' });
    }
    expect(compose.services.gateway.depends_on).toEqual({
      vault: { condition: 'service_healthy' },
      proxy: { condition: 'service_healthy' },
    });
    expect(compose.services.fields.depends_on).toEqual({ vault: { condition: 'service_healthy' } });
  });

  it('runs each service from the one image, with its own entry point', () => {
    for (const name of SERVICES) {
      expect({ name, build: compose.services[name].build }).toEqual({ name, build: '.' });
      expect({ name, command: compose.services[name].command }).toEqual({ name, command: ['node', `services/${name}/dist/main.js`] });
      expect({ name, command: podOf(name).containers[0].command }).toEqual({ name, command: ['node', `services/${name}/dist/main.js`] });
    }
  });

  it('can run several vaults and proxies (--scale): no fixed names or host ports, and clients that dial every replica', () => {
    for (const name of ['vault', 'proxy']) {
      expect(compose.services[name].container_name).toBeUndefined();
      expect(compose.services[name].ports).toBeUndefined();
    }
    expect(compose.services.gateway.environment).toMatchObject({ VAULT_ADDR: 'dns:///vault:50051', PROXY_ADDR: 'dns:///proxy:50052' });
    expect(compose.services.proxy.environment.VAULT_ADDR).toBe('dns:///vault:50051');
    expect(compose.services.fields.environment.VAULT_ADDR).toBe('dns:///vault:50051');
  });

  it('says NODE_ENV=production for every service itself, not only through the image', () => {
    for (const name of SERVICES) expect({ name, env: compose.services[name].environment.NODE_ENV }).toEqual({ name, env: 'production' });
  });

  it('runs Redis with an fsync-always AOF and the vault with VAULT_WRITE_ACK=aof', () => {
    expect(compose.services.redis.command.join(' ')).toMatch(/--appendonly yes --appendfsync always/);
    expect(compose.services.vault.environment.VAULT_WRITE_ACK).toBe('aof');
  });
});

/*
 * What each workload can read (docs/SECURITY.md, "compromised gateway"): its own certificate,
 * key and ca.crt, its own secrets, and in Redis only its own keys.
 */
/** The services that speak gRPC, each with its own mTLS certificate; the admin service speaks to Redis only. */
const TLS_SERVICES = ['vault', 'proxy', 'gateway', 'fields', 'inbound'] as const;
const SERVICES = [...TLS_SERVICES, 'admin'] as const;
/** The services with a Redis user (deploy/redis/users.acl); the proxy has none. */
const REDIS_USERS = ['vault', 'gateway', 'admin', 'fields', 'inbound'] as const;
/** The services that hash or verify API keys, and so share the one pepper (Secret tessera-pepper). */
const PEPPER_READERS = ['gateway', 'admin', 'fields'];
const README = fs.readFileSync(path.join(K8S_DIR, 'README.md'), 'utf8');
// merge: the services share their TLS variables through a `<<: *tls-own-certs` merge key.
const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, any> };
const podOf = (name: string): any => (name === 'redis' ? find('StatefulSet', 'redis') : find('Deployment', name)).spec.template.spec;

/**
 * `parse` of a Deployment's environment as its pod gets it: Secrets as 64 characters, ConfigMap
 * keys from `configMap`, $(NAME) expanded from the variables before it, /certs/ as the files
 * `npm run certs` issues for it (ca.crt alone for a workload without a certificate).
 */
function withResolvedEnv<T>(name: string, configMap: Record<string, string>, parse: (env: NodeJS.ProcessEnv) => T): T {
  const certs = fs.mkdtempSync(path.join(os.tmpdir(), `tessera-k8s-${name}-env-`));
  try {
    const own = (TLS_SERVICES as readonly string[]).includes(name);
    generateDevCertificates(certs, own ? [name] : []);
    const resolved: Record<string, string> = {};
    for (const e of podOf(name).containers[0].env as any[]) {
      const value =
        e.value ??
        (e.valueFrom.configMapKeyRef ? configMap[e.valueFrom.configMapKeyRef.key] : e.valueFrom.secretKeyRef ? 'a'.repeat(64) : undefined);
      resolved[e.name] = String(value)
        .replace(/\$\((\w+)\)/g, (_m, variable: string) => resolved[variable] ?? '')
        .replace(/^\/certs\//, `${own ? path.join(certs, name) : certs}/`);
    }
    return parse(resolved);
  } finally {
    fs.rmSync(certs, { recursive: true, force: true });
  }
}

/**
 * Where a workload's network policy lets it connect: `<app>:<port>` per pod rule, `dns` for
 * cluster DNS, `internet` for an ipBlock, in the policy's order.
 */
function egressTargets(name: string): string[] {
  return (find('NetworkPolicy', name).spec.egress as any[]).flatMap((rule) =>
    rule.to.map((to: any) => {
      if (to.ipBlock) return 'internet';
      const app = to.podSelector?.matchLabels?.app;
      if (app === undefined && to.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns') return 'dns';
      return `${app}:${rule.ports.map((p: any) => p.port).join(',')}`;
    }),
  );
}

/** The files `npm run certs` puts in each directory a workload mounts. */
function certificateDirectories(): Record<string, string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-certs-layout-'));
  try {
    generateDevCertificates(dir, [...TLS_SERVICES, 'redis']);
    const listing: Record<string, string[]> = { '.': fs.readdirSync(dir).sort() };
    for (const name of [...TLS_SERVICES, 'redis']) {
      listing[name] = fs.existsSync(path.join(dir, name)) ? fs.readdirSync(path.join(dir, name)).sort() : [];
    }
    return listing;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Redis ACL glob (`*`, `?`; the braces of a hash tag are literal) as a RegExp. */
const globRegExp = (glob: string): RegExp =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );

interface AclUser {
  name: string;
  on: boolean;
  /** Key patterns of every kind (`~`, `%R~`, `%W~`, `%RW~`). */
  patterns: string[];
  /** Those it may read (`~`, `%R~`, `%RW~`) and write (`~`, `%W~`, `%RW~`). */
  readable: string[];
  writable: string[];
  rules: string[];
}
const ACL_FILE = path.join(ROOT, 'deploy', 'redis', 'users.acl');
const ACL_USERS: AclUser[] = (fs.existsSync(ACL_FILE) ? fs.readFileSync(ACL_FILE, 'utf8') : '')
  .split('\n')
  .filter((line) => line.startsWith('user '))
  .map((line) => {
    const [, name, ...rest] = line.trim().split(/\s+/);
    const keys = rest.flatMap((r) => {
      const m = /^(?:%([RW]+))?~(.*)$/.exec(r);
      return m ? [{ glob: m[2]!, read: m[1] === undefined || m[1].includes('R'), write: m[1] === undefined || m[1].includes('W') }] : [];
    });
    return {
      name: name!,
      on: rest.includes('on') && !rest.includes('off'),
      patterns: keys.map((k) => k.glob),
      readable: keys.filter((k) => k.read).map((k) => k.glob),
      writable: keys.filter((k) => k.write).map((k) => k.glob),
      rules: rest.filter((r) => /^[+-]/.test(r)),
    };
  });
const aclUser = (name: string): AclUser => {
  const user = ACL_USERS.find((u) => u.name === name);
  if (!user) throw new Error(`no ACL user ${name}`);
  return user;
};
const canTouch = (user: AclUser, key: string): boolean => user.patterns.some((p) => globRegExp(p).test(key));
const canRead = (user: AclUser, key: string): boolean => user.readable.some((p) => globRegExp(p).test(key));
const canWrite = (user: AclUser, key: string): boolean => user.writable.some((p) => globRegExp(p).test(key));
/** Last rule naming the command wins; categories are checked by the real Redis in redisAcl.test.ts. */
const explicitly = (user: AclUser, command: string): '+' | '-' | undefined => {
  const rule = user.rules.filter((r) => r.slice(1) === command).pop();
  return rule?.[0] as '+' | '-' | undefined;
};

/** None of `keys` may be read or written by `user`. */
function expectNoAccess(user: AclUser, keys: readonly string[]): void {
  for (const key of keys) expect({ user: user.name, key, allowed: canTouch(user, key) }).toEqual({ user: user.name, key, allowed: false });
}

/** What no service's own user may do: enumerate the keyspace, or anything @dangerous. */
function expectNoListing(user: AclUser): void {
  for (const command of ['scan', 'randomkey', 'dbsize'])
    expect({ user: user.name, command, rule: explicitly(user, command) }).toEqual({ user: user.name, command, rule: '-' });
  expect(user.rules).toContain('-@dangerous');
}

/** The Redis key prefixes a service's store code writes ('tessera:…' string literals), of a directory's files or of files. */
function keyLiterals(dirOrFiles: string | string[]): string[] {
  const files = Array.isArray(dirOrFiles)
    ? dirOrFiles
    : fs
        .readdirSync(dirOrFiles)
        .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
        .map((file) => path.join(dirOrFiles, file));
  const found = new Set<string>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8').replace(/^\s*(\/\/|\*|\/\*).*$/gm, '');
    for (const m of text.matchAll(/['`](tessera:[^'`$]*)(\$\{)?/g)) found.add(m[1]! + (m[2] ? 'x' : ''));
  }
  return [...found].sort();
}

const WORKLOADS = [...SERVICES, 'redis'] as const;

/** Every Secret a workload's pod reads: through its containers' env and envFrom, and its volumes. */
function secretsReadBy(name: string): string[] {
  const pod = podOf(name);
  const fromEnv = pod.containers.flatMap((c: any) => [
    ...(c.env ?? []).map((e: any) => e.valueFrom?.secretKeyRef?.name),
    ...(c.envFrom ?? []).map((e: any) => e.secretRef?.name),
  ]);
  const fromVolumes = (pod.volumes ?? []).flatMap((v: any) => [
    v.secret?.secretName,
    ...(v.projected?.sources ?? []).map((source: any) => source.secret?.name),
  ]);
  return [...new Set<string>([...fromEnv, ...fromVolumes].filter((secret) => secret !== undefined))].sort();
}

/**
 * The literal Secrets the README's first sh block creates, by running it with bash as an operator
 * would (openssl and sha256sum real), with a kubectl on PATH that only records its arguments.
 */
function readmeSecrets(): Map<string, Record<string, string>> {
  const block = /```sh\n([\s\S]*?)```/.exec(README)?.[1];
  if (block === undefined) throw new Error('deploy/k8s/README.md has no sh block');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-k8s-readme-'));
  try {
    fs.writeFileSync(path.join(dir, 'kubectl'), '#!/bin/sh\nprintf \'%s\\n\' "$@" "--" >>"$KUBECTL_LOG"\n', { mode: 0o755 });
    const log = path.join(dir, 'kubectl.log');
    const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', block], {
      cwd: ROOT,
      env: { PATH: `${dir}:${process.env.PATH}`, KUBECTL_LOG: log },
      encoding: 'utf8',
      timeout: 10_000,
    });
    if (run.status !== 0) throw new Error(`the README's commands failed: ${run.stderr}`);
    const secrets = new Map<string, Record<string, string>>();
    for (const command of fs.readFileSync(log, 'utf8').split('\n--\n')) {
      const args = command.split('\n');
      const at = args.indexOf('generic');
      if (args[at - 2] !== 'create' || args[at - 1] !== 'secret') continue;
      const literals = args.filter((a) => a.startsWith('--from-literal=')).map((a) => /^--from-literal=(\w+)=(.*)$/s.exec(a)!);
      if (literals.length > 0) secrets.set(args[at + 1]!, Object.fromEntries(literals.map((m) => [m[1]!, m[2]!])));
    }
    return secrets;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Each secret variable docker-compose.yml takes from the environment, and the services it belongs to. */
const COMPOSE_SECRETS: Record<string, string[]> = {
  VAULT_KEYS: ['vault'],
  REDIS_VAULT_PASSWORD: ['vault'],
  API_KEY_PEPPER: PEPPER_READERS,
  REDIS_GATEWAY_PASSWORD: ['gateway'],
  REDIS_ADMIN_PASSWORD: ['admin'],
  REDIS_FIELDS_PASSWORD: ['fields'],
  REDIS_INBOUND_PASSWORD: ['inbound'],
  INBOUND_CARD_FINGERPRINT_KEY: ['inbound'],
  REDIS_VAULT_PASSWORD_SHA256: ['redis'],
  REDIS_GATEWAY_PASSWORD_SHA256: ['redis'],
  REDIS_ADMIN_PASSWORD_SHA256: ['redis'],
  REDIS_FIELDS_PASSWORD_SHA256: ['redis'],
  REDIS_INBOUND_PASSWORD_SHA256: ['redis'],
};
/** Variables compose takes from the environment that are settings, not secrets. */
const COMPOSE_SETTINGS = ['FIELDS_ORIGIN', 'API_ORIGIN'];
/** The environment variables (`${NAME…}`) a compose service's definition interpolates. */
const composeVariables = (name: string): string[] => [
  ...new Set([...JSON.stringify(compose.services[name]).matchAll(/\$\{(\w+)/g)].map((m) => m[1]!)),
];

describe('what each workload can read', () => {
  const layout = certificateDirectories();

  it('npm run certs gives each gRPC service a directory with only its own key, its certificate and ca.crt; ca.key stays outside', () => {
    expect(layout['.']).toContain('ca.key');
    for (const name of [...TLS_SERVICES, 'redis'])
      expect({ name, files: layout[name] }).toEqual({ name, files: ['ca.crt', 'tls.crt', 'tls.key'] });
    // The certificates npm run certs issues: every directory the recipes mount.
    const certsScript = fs.readFileSync(path.join(ROOT, 'scripts', 'certs.mjs'), 'utf8');
    const issued = /const services = \[([^\]]*)\]/.exec(certsScript)?.[1]?.match(/[a-z-]+/g) ?? [];
    expect(issued.sort()).toEqual([...TLS_SERVICES, 'redis'].sort());
  });

  it('Kubernetes: each pod mounts only its own TLS Secret, made from its own directory (the admin pod: ca.crt alone); no pod can read ca.key', () => {
    for (const name of [...SERVICES, 'redis']) {
      const pod = podOf(name);
      const secrets = (pod.volumes ?? []).filter((v: any) => v.secret || v.projected);
      expect({ name, secrets: secrets.map((v: any) => v.secret?.secretName) }).toEqual({ name, secrets: [`tessera-${name}-tls`] });
      expect(secrets[0].secret.items).toBeUndefined();
      const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === secrets[0].name);
      expect(mount).toMatchObject({ mountPath: '/certs', readOnly: true });
      for (const c of pod.containers) expect(c.envFrom).toBeUndefined();
      // The README creates each Secret from that service's own directory only; the admin's from ca.crt.
      const source = name === 'admin' ? '.tessera/certs/ca.crt' : `.tessera/certs/${name}`;
      expect(README).toContain(`create secret generic tessera-${name}-tls --from-file=${source}\n`);
    }
    for (const name of TLS_SERVICES) {
      const env = envOf(name);
      expect({ name, files: [env.TLS_CA_FILE, env.TLS_CERT_FILE, env.TLS_KEY_FILE] }).toEqual({
        name,
        files: ['/certs/ca.crt', '/certs/tls.crt', '/certs/tls.key'],
      });
    }
    expect(README).not.toMatch(/--from-file=\.tessera\/certs(\/)?[\s`]/);
    expect(JSON.stringify(docs)).not.toContain('ca.key');
  });

  it('Kubernetes: each pod gets only its own secret values and the pepper if it uses API keys; each Redis-using service its own Redis user', () => {
    const refs = (name: string): string[] =>
      podOf(name)
        .containers.flatMap((c: any) => c.env ?? [])
        .filter((e: any) => e.valueFrom?.secretKeyRef)
        .map((e: any) => `${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`)
        .sort();
    expect(refs('vault')).toEqual(['tessera-vault-secrets/REDIS_PASSWORD', 'tessera-vault-secrets/VAULT_KEYS']);
    for (const name of PEPPER_READERS) {
      expect({ name, refs: refs(name) }).toEqual({
        name,
        refs: [`tessera-${name}-secrets/REDIS_PASSWORD`, 'tessera-pepper/API_KEY_PEPPER'].sort(),
      });
    }
    expect(refs('proxy')).toEqual([]);
    // Redis verifies the passwords against their digests: it never holds a service's password.
    expect(refs('redis')).toEqual(
      ['ADMIN', 'FIELDS', 'GATEWAY', 'INBOUND', 'VAULT'].map((user) => `tessera-redis-secrets/REDIS_${user}_PASSWORD_SHA256`),
    );
    for (const name of REDIS_USERS) {
      expect({ name, env: envOf(name) }).toMatchObject({
        name,
        env: { REDIS_URL: `rediss://tessera-${name}:$(REDIS_PASSWORD)@redis:6379`, REDIS_TLS_CA_FILE: '/certs/ca.crt' },
      });
      // Kubernetes expands $(REDIS_PASSWORD) only from variables defined before it.
      const names = podOf(name).containers[0].env.map((e: any) => e.name);
      expect(names.indexOf('REDIS_PASSWORD')).toBeLessThan(names.indexOf('REDIS_URL'));
    }
    expect(envOf('proxy').REDIS_URL).toBeUndefined();
  });

  it('Kubernetes: each workload reads only Secrets of its own (tessera-<name>-tls, tessera-<name>-secrets), none is read by two, but the pepper by the three that use API keys', () => {
    const readers = new Map<string, string[]>();
    for (const name of WORKLOADS) {
      const own = [`tessera-${name}-secrets`, `tessera-${name}-tls`, ...(PEPPER_READERS.includes(name) ? ['tessera-pepper'] : [])];
      for (const secret of secretsReadBy(name)) {
        expect({ name, secret, own: own.includes(secret) }).toEqual({ name, secret, own: true });
        readers.set(secret, [...(readers.get(secret) ?? []), name]);
      }
    }
    for (const [secret, names] of readers) {
      expect({ secret, readers: names.sort() }).toEqual({
        secret,
        readers: secret === 'tessera-pepper' ? [...PEPPER_READERS].sort() : [names[0]],
      });
    }
  });

  it("Kubernetes: the README's commands put each workload's material in its own Secret only, and give Redis digests, not passwords", () => {
    const created = readmeSecrets();
    const secretsOf = (name: string) => secretsReadBy(name).filter((secret) => secret.endsWith('-secrets') || secret === 'tessera-pepper');
    // Exactly the Secrets the pods read, each holding exactly the keys its pods read: nothing of another workload.
    expect([...created.keys()].sort()).toEqual([...new Set(WORKLOADS.flatMap(secretsOf))].sort());
    for (const name of WORKLOADS) {
      for (const secret of secretsOf(name)) {
        const keys = podOf(name)
          .containers.flatMap((c: any) => c.env ?? [])
          .filter((e: any) => e.valueFrom?.secretKeyRef?.name === secret)
          .map((e: any) => e.valueFrom.secretKeyRef.key as string);
        expect({ name, secret, keys: Object.keys(created.get(secret)!).sort() }).toEqual({ name, secret, keys: keys.sort() });
      }
    }
    // No value sits in two Secrets, and Redis's are the digests of the four services' passwords.
    const values = [...created.values()].flatMap((literals) => Object.values(literals));
    expect(new Set(values).size).toBe(values.length);
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(created.get('tessera-redis-secrets')).toEqual(
      Object.fromEntries(
        REDIS_USERS.map((name) => [
          `REDIS_${name.toUpperCase()}_PASSWORD_SHA256`,
          sha256(created.get(`tessera-${name}-secrets`)!.REDIS_PASSWORD!),
        ]),
      ),
    );
  });

  it('the proxy gets no Redis URL or password, no vault key and no pepper, in Kubernetes and in compose', () => {
    const forbidden = /^(REDIS_|VAULT_KEYS|VAULT_KEK|PKCS11_|API_KEY_PEPPER|TESSERA_STATE_DIR)/;
    const k8sEnv = podOf('proxy').containers.flatMap((c: any) => c.env ?? []);
    expect(k8sEnv.map((e: any) => e.name).filter((n: string) => forbidden.test(n))).toEqual([]);
    expect(k8sEnv.filter((e: any) => e.valueFrom?.secretKeyRef)).toEqual([]);
    expect(secretsReadBy('proxy')).toEqual(['tessera-proxy-tls']);
    expect(Object.keys(compose.services.proxy.environment).filter((n) => forbidden.test(n))).toEqual([]);
    expect(composeVariables('proxy')).toEqual([]);
  });

  it('docker compose: each service takes only its own secret variables; the proxy none, Redis only the password digests', () => {
    for (const name of Object.keys(compose.services)) {
      for (const variable of composeVariables(name)) {
        const owners = COMPOSE_SECRETS[variable] ?? (COMPOSE_SETTINGS.includes(variable) ? [name] : ['unknown: add it to COMPOSE_SECRETS']);
        expect({ name, variable, owner: owners.includes(name) }).toEqual({ name, variable, owner: true });
      }
    }
    expect([...new Set(Object.keys(compose.services).flatMap(composeVariables))].sort()).toEqual(
      [...Object.keys(COMPOSE_SECRETS), ...COMPOSE_SETTINGS].sort(),
    );
    expect(Object.keys(compose.services.redis.environment).filter((n) => /PASSWORD$/.test(n))).toEqual([]);
  });

  it('Kubernetes: Redis runs deploy/redis/start.sh with the shipped ACL, TLS only', () => {
    const pod = podOf('redis');
    const redis = pod.containers[0];
    expect(redis.command).toEqual(['sh', '/etc/tessera-redis/start.sh']);
    expect(pod.volumes).toContainEqual({ name: 'config', configMap: { name: 'tessera-redis' } });
    expect(README).toContain('create configmap tessera-redis --from-file=deploy/redis/');
    expect(redis.env).toContainEqual({ name: 'TESSERA_REDIS_TLS_DIR', value: '/certs' });
  });

  it('docker compose: each container mounts only its own certificate directory (the admin ca.crt alone); Redis runs start.sh with the ACL and TLS', () => {
    const mounts = (name: string): string[] => compose.services[name].volumes ?? [];
    for (const name of [...TLS_SERVICES, 'redis']) {
      const certMounts = mounts(name).filter((v) => v.includes('.tessera'));
      expect({ name, certMounts }).toEqual({ name, certMounts: [`./.tessera/certs/${name}:/certs:ro`] });
    }
    expect(mounts('admin').filter((v) => v.includes('.tessera'))).toEqual(['./.tessera/certs/ca.crt:/certs/ca.crt:ro']);
    for (const name of TLS_SERVICES) {
      expect(compose.services[name].environment).toMatchObject({
        TLS_CA_FILE: '/certs/ca.crt',
        TLS_CERT_FILE: '/certs/tls.crt',
        TLS_KEY_FILE: '/certs/tls.key',
      });
    }
    for (const name of REDIS_USERS) {
      const variable = `REDIS_${name.toUpperCase()}_PASSWORD`;
      expect({ name, url: compose.services[name].environment.REDIS_URL }).toEqual({
        name,
        url: expect.stringMatching(new RegExp(`^rediss://tessera-${name}:\\$\\{${variable}[^}]*\\}@redis:6379$`)),
      });
      expect({ name, ca: compose.services[name].environment.REDIS_TLS_CA_FILE }).toEqual({ name, ca: '/certs/ca.crt' });
    }
    expect(compose.services.proxy.environment.REDIS_URL).toBeUndefined();
    expect(compose.services.redis.entrypoint).toEqual(['sh', '/etc/tessera-redis/start.sh']);
    expect(mounts('redis')).toContain('./deploy/redis:/etc/tessera-redis:ro');
    expect(compose.services.redis.environment.TESSERA_REDIS_TLS_DIR).toBe('/certs');
  });
});

describe('Redis users (deploy/redis/users.acl)', () => {
  const store = (...parts: string[]) => path.join(ROOT, ...parts);
  const merchantData = (file: string) => store('packages', 'merchant-data', 'src', 'store', file);
  const edge = (file: string) => store('packages', 'edge', 'src', 'store', file);
  // The gateway's own stores and the shared ones it opens (edge's counters, merchant data).
  // (Not the fields service's requests to move keys to the newest pepper: the gateway moves its own.)
  const gatewayKeys = [
    ...keyLiterals(store('services', 'gateway', 'src', 'store')),
    ...keyLiterals(store('packages', 'edge', 'src', 'store')),
    ...keyLiterals(store('packages', 'merchant-data', 'src', 'store')).filter(
      // Nor the payment pages' script inventory: the fields service keeps it, the admin service shows it.
      // Nor the crypto-shredding and card export orders: the admin service writes them, the vault carries them out (ADR 0014).
      (k) =>
        k !== 'tessera:apikey-moves' &&
        !k.startsWith('tessera:page-') &&
        !k.startsWith('tessera:shred:') &&
        !k.startsWith('tessera:export'),
    ),
  ];
  // The operators' stores, wherever the split has put them (the admin service's, or still the gateway's).
  const adminStoreFiles = [
    store('services', 'admin', 'src', 'store', 'redisAdminStores.ts'),
    store('services', 'gateway', 'src', 'store', 'redisAdminStores.ts'),
  ].filter((file) => fs.existsSync(file));
  // Admin: merchant data but the shoppers' form and CVC sessions, edge's rate-limit counters, the operators' stores.
  const adminKeys = keyLiterals([
    ...fs
      .readdirSync(path.dirname(merchantData('x')))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !['formSessionStore.ts', 'cvcSessionStore.ts'].includes(f))
      .map(merchantData),
    edge('rateLimitCounter.ts'),
    ...adminStoreFiles,
    // The merchants' route documents (docs/routes.md): the admin service writes them.
    store('packages', 'routes', 'src', 'store', 'routeStore.ts'),
  ]);
  /** What the admin service shows and never writes: what merchants' /v1 calls did. */
  // And the exports' files: OpenPGP ciphertext the vault writes, which the admin service hands out.
  const adminReadOnly = /^tessera:(detokenizations|request-log|request-stats|page-inventory|export-file)(:|$)/;
  // Fields: API keys, rate limits and the distinct-card counter, form sessions, merchant settings.
  const fieldsFiles = {
    read: [merchantData('redisApiKeyStore.ts'), merchantData('merchantSettingsStore.ts'), edge('keyLookupWithPeek.ts')],
    write: [
      edge('rateLimitCounter.ts'),
      edge('distinctCardCounter.ts'),
      merchantData('formSessionStore.ts'),
      // Its requests to move a key to the newest pepper, which the admin service applies.
      merchantData('apiKeyMoveRequests.ts'),
      // What merchants' payment pages report (not the operators' authorizations of their scripts).
      merchantData('pageInventoryStore.ts'),
    ],
  };
  const fieldsKeys = keyLiterals([...fieldsFiles.read, ...fieldsFiles.write]);
  /**
   * What the fields service writes: its counters, form sessions and a key's last use; and the key
   * records, which its lookup script declares (Redis checks a script's keys for write access).
   * The digest and id indexes, the settings and the layout it only reads: it can make no key.
   */
  const fieldsWrites = new Set([
    ...keyLiterals(fieldsFiles.write),
    ...fieldsKeys.filter((k) => k.startsWith('tessera:apikey-lastuse:') || k.startsWith('tessera:apikey:')),
  ]);
  const vaultKeys = keyLiterals(store('services', 'vault', 'src', 'store'));
  /** Keys no service but the vault (cards) or the gateway (idempotency) may touch, in either layout. */
  const cardAndIdempotency = [
    'tessera:card:{tok_1}',
    'tessera:cvv:{tok_1}',
    'tessera:checkpoint:rewrap',
    'tessera:card*',
    'tessera:idempotency:{m:acme}:k',
    'tessera:idempotency-usage:{m:acme}:live:1',
    '{tessera-gateway}:tessera:idempotency:acme:k',
    '*',
  ];

  it('turn the default user off and define one user per Redis-using service', () => {
    expect(ACL_USERS.map((u) => [u.name, u.on])).toEqual([
      ['default', false],
      ['tessera-vault', true],
      ['tessera-gateway', true],
      ['tessera-admin', true],
      ['tessera-fields', true],
      ['tessera-inbound', true],
    ]);
    // Off, so no one logs in as it; with every permission, as Redis replays the AOF as the default user.
    expect(aclUser('default')).toMatchObject({ patterns: ['*'], rules: ['+@all'] });
    // start.sh gives every user but the default one its password digest.
    const startSh = fs.readFileSync(path.join(ROOT, 'deploy', 'redis', 'start.sh'), 'utf8');
    for (const user of ACL_USERS.filter((u) => u.on)) expect(startSh).toContain(`s/^user ${user.name} on /user ${user.name} on #$`);
  });

  it('give the gateway user every key its store writes and none of the card store', () => {
    const gateway = aclUser('tessera-gateway');
    expect(gatewayKeys.length).toBeGreaterThan(10);
    for (const key of gatewayKeys) expect({ key, allowed: canWrite(gateway, key) }).toEqual({ key, allowed: true });
    expectNoAccess(gateway, [
      ...vaultKeys,
      'tessera:card:{tok_1}',
      'tessera:cvv:{tok_1}',
      'tessera:checkpoint:rewrap',
      'tessera:card*',
      '*',
    ]);
    // Cluster mode prefixes every gateway key with the {tessera-gateway} hash tag.
    expect(canTouch(gateway, '{tessera-gateway}:tessera:apikey:key_1')).toBe(true);
    // The forward proxy reads the merchants' outbound routes; only the admin service writes them.
    expect({ read: canRead(gateway, 'tessera:routes:{m:x}:routes'), write: canWrite(gateway, 'tessera:routes:{m:x}:routes') }).toEqual({
      read: true,
      write: false,
    });
    expectNoListing(gateway);
  });

  it('give the admin user the keys of the stores it opens, the request log and the detokenization audit read-only, and no card, CVV or idempotency record', () => {
    const admin = aclUser('tessera-admin');
    expect(adminStoreFiles.length).toBeGreaterThan(0);
    expect(adminKeys).toEqual(
      expect.arrayContaining([
        'tessera:operator:',
        'tessera:admin-session:',
        'tessera:request-log:',
        'tessera:ratelimit:',
        'tessera:apikey-moves',
        'tessera:routes:{m:x',
      ]),
    );
    for (const key of adminKeys) {
      const access = { read: canRead(admin, key), write: canWrite(admin, key) };
      expect({ key, access }).toEqual({ key, access: { read: true, write: !adminReadOnly.test(key) } });
    }
    // The operators, their sessions and throttles and the admin audit live in the admin slot.
    for (const key of adminKeys.filter((k) => /^tessera:(operator|admin-|audit)/.test(k))) {
      expect({ key, allowed: canWrite(admin, `{tessera-gateway}:${key}${key.endsWith(':') ? 'x' : ''}`) }).toEqual({ key, allowed: true });
    }
    expectNoAccess(admin, [...vaultKeys, ...cardAndIdempotency, 'tessera:form-session:fs_1', 'tessera:cvc-session:x']);
    expectNoListing(admin);
  });

  it("give the admin user a card import's status, upload, queues and (read-only) report, never its sealed key, checkpoint rows or lease", () => {
    const admin = aclUser('tessera-admin');
    const vault = aclUser('tessera-vault');
    const part = (p: CardImportPart): string => cardImportKey('imp_0123456789abcdefghijkl', p);
    const access = (user: AclUser, key: string) => ({ key, read: canRead(user, key), write: canWrite(user, key) });
    for (const key of [part('meta'), part('upload'), CARD_IMPORT_QUEUE_KEY, CARD_IMPORT_CREATE_QUEUE_KEY])
      expect(access(admin, key)).toEqual({ key, read: true, write: true });
    expect(access(admin, part('report'))).toEqual({ key: part('report'), read: true, write: false });
    expectNoAccess(admin, [part('key'), part('outcomes'), part('lease'), 'tessera:import:*', 'tessera:import:{imp_x}:key']);
    for (const p of ['meta', 'key', 'upload', 'outcomes', 'report', 'lease'] as const)
      expect(access(vault, part(p))).toEqual({ key: part(p), read: true, write: true });
  });

  it('give the fields user no write to the key indexes or settings, writes to its counters, form sessions and key lookups only, and nothing of operators, cards or idempotency', () => {
    const fields = aclUser('tessera-fields');
    expect(fieldsKeys).toEqual(
      expect.arrayContaining([
        'tessera:apikey:',
        'tessera:apikey-digest:',
        'tessera:apikey-index',
        'tessera:apikey-lastuse:',
        'tessera:apikey-moves',
        'tessera:form-session:',
        'tessera:merchant-settings:',
        'tessera:ratelimit:',
      ]),
    );
    for (const key of fieldsKeys) {
      const access = { read: canRead(fields, key), write: canWrite(fields, key) };
      expect({ key, access }).toEqual({ key, access: { read: true, write: fieldsWrites.has(key) } });
    }
    // The admin slot holds the operators and their sessions: a write there would be a dashboard login.
    expectNoAccess(fields, [
      '{tessera-gateway}:tessera:operator:op_1',
      '{tessera-gateway}:tessera:admin-session:s',
      '{tessera-gateway}:tessera:audit',
      'tessera:operator:op_1',
      'tessera:request-log:{m:acme}',
      'tessera:detokenizations:{m:acme}',
      'tessera:cvc-session:x',
      'tessera:page-authorizations:{m:acme}:live:0123456789abcdef',
      ...vaultKeys,
      ...cardAndIdempotency,
    ]);
    expectNoListing(fields);
  });

  it('give the vault user its card, CVV, checkpoint and CA keys, the CVC sessions it claims, the events it records and the routes it reads, only', () => {
    const vault = aclUser('tessera-vault');
    // The shared stores the vault opens: the gateway opens a CVC grant, the vault claims it
    // (services/vault/src/openMerchantData.ts); it records token.expiring_soon and cvv.expired_unused
    // (the same connection, docs/adr/0012), with the event store's and sweep lease's keys.
    const eventKeys = gatewayKeys.filter((k) => k.startsWith('tessera:events:'));
    expect(eventKeys.length).toBeGreaterThan(0);
    // And the crypto-shredding and card export orders two operators approved in the admin service, which it
    // carries out (ADR 0014), the exports' files included.
    const shredKeys = adminKeys.filter((k) => k.startsWith('tessera:shred:') || k.startsWith('tessera:export'));
    expect(shredKeys.filter((k) => k.startsWith('tessera:shred:')).length).toBeGreaterThan(0);
    expect(shredKeys.filter((k) => k.startsWith('tessera:export-file:')).length).toBeGreaterThan(0);
    const claimedByTheVault = ['tessera:cvc-session:', ...eventKeys];
    expect(gatewayKeys).toEqual(expect.arrayContaining(claimedByTheVault));
    expect(vaultKeys).toEqual(expect.arrayContaining(['tessera:card:{', 'tessera:cvv:{x', 'tessera:checkpoint:x', 'tessera:ca:{m:x']));
    for (const key of [...vaultKeys, ...claimedByTheVault, ...shredKeys])
      expect({ key, allowed: canWrite(vault, key) }).toEqual({ key, allowed: true });
    // The merchants' route documents, read-only: a leaf certificate only for a host of an outbound route (ADR 0013).
    const routeKeys = keyLiterals([store('packages', 'routes', 'src', 'store', 'routeStore.ts')]);
    expect(routeKeys.length).toBeGreaterThan(0);
    for (const key of routeKeys)
      expect({ key, read: canRead(vault, key), write: canWrite(vault, key) }).toEqual({ key, read: true, write: false });
    expectNoAccess(
      vault,
      [...gatewayKeys, ...adminKeys, ...fieldsKeys].filter(
        (k) => !claimedByTheVault.includes(k) && !routeKeys.includes(k) && !shredKeys.includes(k),
      ),
    );
    expect(vault.rules).toContain('-@dangerous');
    expect(explicitly(vault, 'config|get')).toBe('+');
    expect(explicitly(vault, 'config|set')).toBeUndefined();
  });
});

/*
 * docs/architecture.md draws who talks to whom; the network policies enforce it. The drawing's
 * arrows must be the policies' flows, so neither can change alone.
 */
describe('docs/architecture.md', () => {
  const drawing = /```mermaid\n(flowchart[\s\S]*?)```/.exec(fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8'))?.[1] ?? '';
  /** Node id to the first word of its label, lower-case ("gateway :8080" is gateway, the PSP the internet). */
  const nodes = new Map(
    [...drawing.matchAll(/^\s*(\w+)\[\(?"([A-Za-z]+)/gm)].map((m) => [m[1]!, m[2] === 'PSP' ? 'internet' : m[2]!.toLowerCase()]),
  );
  /** Every arrow or link as [from, to], by node name. */
  const flows = [...drawing.matchAll(/^\s*(\w+)\s+(?:--|-\.)\s+"[^"]*"\s+(?:-->|---|\.-)\s+(\w+)\s*$/gm)].map((m) => [
    nodes.get(m[1]!) ?? m[1]!,
    nodes.get(m[2]!) ?? m[2]!,
  ]);

  it('draws the five services, Redis and the PSP', () => {
    expect([...nodes.values()]).toEqual(expect.arrayContaining([...SERVICES, 'redis', 'internet']));
  });

  it("draws each service's outgoing flows exactly as its network policy allows them", () => {
    for (const name of [...SERVICES]) {
      const drawn = flows.filter(([from]) => from === name).map(([, to]) => to);
      const allowed = egressTargets(name)
        .filter((t) => t !== 'dns')
        .map((t) => t.split(':')[0]);
      expect({ name, drawn: drawn.sort() }).toEqual({ name, drawn: allowed.sort() });
    }
  });

  it('draws the callers of the vault, the proxy and Redis exactly as their network policies admit them', () => {
    for (const name of ['vault', 'proxy', 'redis']) {
      const drawn = flows.filter(([, to]) => to === name).map(([from]) => from);
      const admitted = find('NetworkPolicy', name).spec.ingress.flatMap((r: any) => r.from.map((f: any) => f.podSelector.matchLabels.app));
      expect({ name, drawn: drawn.sort() }).toEqual({ name, drawn: admitted.sort() });
    }
  });
});
