/**
 * Static checks of the deployment files: they parse, and they keep the promises the README makes
 * (vault network policy, probes, persistence flags). No processes are started. This is not a
 * Kubernetes schema validation (no validator with the Kubernetes schemas is installed; see
 * deploy/k8s/README.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { ROOT } from './harness';

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

  it('run the services in production with mTLS, and the vault with an acknowledged write level', () => {
    for (const name of ['vault', 'proxy', 'gateway']) {
      const env = Object.fromEntries(find('Deployment', name).spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
      expect(env.NODE_ENV).toBe('production');
      expect(env.TLS_CERT_FILE).toBe(`/certs/${name}.crt`);
    }
    const vaultEnv = find('Deployment', 'vault').spec.template.spec.containers[0].env;
    expect(vaultEnv).toContainEqual({ name: 'VAULT_WRITE_ACK', value: 'aof' });
    expect(find('StatefulSet', 'redis').spec.template.spec.containers[0].args.join(' ')).toMatch(
      /--appendonly yes --appendfsync always --maxmemory-policy noeviction/,
    );
  });

  it('put the vault in its own network policy: ingress from gateway and proxy only, egress to Redis (and DNS) only', () => {
    expect(find('NetworkPolicy', 'default-deny').spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const vault = find('NetworkPolicy', 'vault').spec;
    expect(vault.podSelector).toEqual({ matchLabels: { app: 'vault' } });
    expect(vault.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(vault.ingress).toHaveLength(1);
    expect(vault.ingress[0].from).toEqual([
      { podSelector: { matchLabels: { app: 'gateway' } } },
      { podSelector: { matchLabels: { app: 'proxy' } } },
    ]);
    expect(vault.ingress[0].ports).toEqual([{ protocol: 'TCP', port: 50051 }]);
    expect(vault.egress).toHaveLength(2);
    expect(vault.egress[0]).toEqual({ to: [{ podSelector: { matchLabels: { app: 'redis' } } }], ports: [{ protocol: 'TCP', port: 6379 }] });
    // The only other egress is cluster DNS on port 53: no ipBlock, nothing outside the cluster.
    expect(vault.egress[1].to[0].podSelector).toEqual({ matchLabels: { 'k8s-app': 'kube-dns' } });
    expect(vault.egress[1].ports.map((p: any) => p.port)).toEqual([53, 53]);
    expect(JSON.stringify(vault)).not.toContain('ipBlock');
  });

  it('let only the proxy reach the internet, and not private ranges', () => {
    const withIpBlock = docs.filter((d) => d.kind === 'NetworkPolicy' && JSON.stringify(d.spec).includes('ipBlock'));
    expect(withIpBlock.map((d) => d.metadata.name)).toEqual(['proxy']);
    const block = find('NetworkPolicy', 'proxy').spec.egress.find((e: any) => e.to[0].ipBlock).to[0].ipBlock;
    expect(block.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']));
  });
});

describe('Kubernetes manifests: scale-out (docs/scaling.md)', () => {
  const SERVICES = { vault: 50051, proxy: 50052 } as const;

  it('give the vault and the proxy headless Services, which the gateway and the proxy dial with dns:///', () => {
    for (const [name, port] of Object.entries(SERVICES)) {
      const headless = find('Service', `${name}-headless`).spec;
      expect(headless.clusterIP).toBe('None');
      expect(headless.selector).toEqual({ app: name });
      expect(headless.ports.map((p: any) => p.port)).toEqual([port]);
    }
    const target = (name: keyof typeof SERVICES) => `dns:///${name}-headless.tessera.svc.cluster.local:${SERVICES[name]}`;
    expect(envOf('gateway')).toMatchObject({ VAULT_ADDR: target('vault'), PROXY_ADDR: target('proxy') });
    expect(envOf('proxy')).toMatchObject({ VAULT_ADDR: target('vault') });
  });

  it('scale every Deployment with a CPU HorizontalPodAutoscaler of at least two replicas, which alone sets the count', () => {
    for (const name of ['vault', 'proxy', 'gateway']) {
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
    for (const name of ['vault', 'proxy', 'gateway']) {
      const pdb = find('PodDisruptionBudget', name).spec;
      expect(pdb.selector.matchLabels).toEqual(find('Deployment', name).spec.template.metadata.labels);
      expect(pdb.maxUnavailable).toBe(1);
      expect(find('HorizontalPodAutoscaler', name).spec.minReplicas).toBeGreaterThan(pdb.maxUnavailable);
    }
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, any> };

  it('health-checks every service and starts each only after what it needs is healthy', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect({ name, test: service.healthcheck?.test?.[0] }).toEqual({ name, test: 'CMD' });
    }
    expect(compose.services.gateway.depends_on).toEqual({
      vault: { condition: 'service_healthy' },
      proxy: { condition: 'service_healthy' },
    });
  });

  it('can run several vaults and proxies (--scale): no fixed names or host ports, and clients that dial every replica', () => {
    for (const name of ['vault', 'proxy']) {
      expect(compose.services[name].container_name).toBeUndefined();
      expect(compose.services[name].ports).toBeUndefined();
    }
    expect(compose.services.gateway.environment).toMatchObject({ VAULT_ADDR: 'dns:///vault:50051', PROXY_ADDR: 'dns:///proxy:50052' });
    expect(compose.services.proxy.environment.VAULT_ADDR).toBe('dns:///vault:50051');
  });

  it('runs Redis with an fsync-always AOF and the vault with VAULT_WRITE_ACK=aof', () => {
    expect(compose.services.redis.command.join(' ')).toMatch(/--appendonly yes --appendfsync always/);
    expect(compose.services.vault.environment.VAULT_WRITE_ACK).toBe('aof');
  });
});
