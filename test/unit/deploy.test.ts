/**
 * Static checks of the deployment files: they parse, and they keep the promises the README makes
 * (vault network policy, probes, persistence flags). No processes are started. This is not a
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
import { drainDeadlineMs } from '../../packages/edge/src/transport/drain';
import { ROOT } from '@tessera/stack';

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

  it('give the gateway a preStop pause and a grace period longer than that pause plus its whole drain', () => {
    const pod = find('Deployment', 'gateway').spec.template.spec;
    const container = pod.containers[0];
    const preStop = container.lifecycle.preStop.exec.command as string[];
    expect(preStop[0]).toBe('sleep');
    const proxyTimeoutMs = Number(container.env.find((e: any) => e.name === 'PROXY_TIMEOUT_MS')?.value ?? 40_000);
    const neededSeconds = Number(preStop[1]) + drainDeadlineMs(proxyTimeoutMs) / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(neededSeconds);
  });

  it('run the services in production with mTLS, and the vault with an acknowledged write level', () => {
    for (const name of ['vault', 'proxy', 'gateway']) {
      const env = Object.fromEntries(find('Deployment', name).spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
      expect(env.NODE_ENV).toBe('production');
      expect(env.TLS_CERT_FILE).toBe('/certs/tls.crt');
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

/*
 * The hosted card fields (docs/browser.md): the documented production deployment must serve them,
 * or browser card collection does not work at all.
 */
describe('Kubernetes manifests: hosted card fields (docs/browser.md)', () => {
  const gatewayPod = () => find('Deployment', 'gateway').spec.template.spec;
  const gatewayContainer = () => gatewayPod().containers[0];
  const fieldsPort = () => Number(envOf('gateway').FIELDS_PORT);
  /** The origins the README's `kubectl create configmap tessera-gateway-origins` gives. */
  const readmeOrigins = (): Record<string, string> => {
    const command = /create configmap tessera-gateway-origins((?: \\\n|[^\n])*)/.exec(README)?.[1] ?? '';
    return Object.fromEntries([...command.matchAll(/--from-literal=(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
  };

  it('run the fields listener on a container port of its own, bound to the pod address, as docker compose does', () => {
    const env = envOf('gateway');
    expect(fieldsPort()).toBeGreaterThan(0);
    expect(fieldsPort()).not.toBe(Number(env.PORT));
    // Service traffic arrives at the pod's address: the default 127.0.0.1 would refuse it.
    expect(env.FIELDS_BIND).toBe('0.0.0.0');
    expect(gatewayContainer().ports).toContainEqual({ name: 'fields', containerPort: fieldsPort() });
    expect({ FIELDS_PORT: env.FIELDS_PORT, FIELDS_BIND: env.FIELDS_BIND }).toEqual({
      FIELDS_PORT: compose.services.gateway.environment.FIELDS_PORT,
      FIELDS_BIND: compose.services.gateway.environment.FIELDS_BIND,
    });
  });

  it('expose the fields on a Service of their own over the gateway pods, apart from the API', () => {
    const podLabels = find('Deployment', 'gateway').spec.template.metadata.labels;
    const targets = (name: string): number[] => find('Service', name).spec.ports.map((p: any) => p.targetPort);
    const fields = find('Service', 'gateway-fields').spec;
    expect(fields.selector).toEqual(podLabels);
    expect(fields.type).toBe(find('Service', 'gateway').spec.type);
    expect(targets('gateway-fields')).toEqual([fieldsPort()]);
    expect(fields.ports[0].name).toBe('fields');
    // Two origins: the API's Service does not serve the fields, nor the fields' the API.
    expect(targets('gateway')).toEqual([Number(envOf('gateway').PORT)]);
  });

  it("take FIELDS_ORIGIN and API_ORIGIN from the operator's ConfigMap, which the README creates with https origins", () => {
    const env = gatewayContainer().env as any[];
    for (const name of ['FIELDS_ORIGIN', 'API_ORIGIN']) {
      // Not optional: without the operator's origins the pod must not start.
      expect(env.find((e) => e.name === name)).toEqual({
        name,
        valueFrom: { configMapKeyRef: { name: 'tessera-gateway-origins', key: name } },
      });
    }
    const origins = readmeOrigins();
    expect(Object.keys(origins).sort()).toEqual(['API_ORIGIN', 'FIELDS_ORIGIN']);
    expect(new URL(origins.FIELDS_ORIGIN!).protocol).toBe('https:');
    expect(new URL(origins.FIELDS_ORIGIN!).host).not.toBe(new URL(origins.API_ORIGIN!).host);
  });

  it("give the gateway an environment its production configuration check accepts, with the fields on at the operator's origins", () => {
    const origins = readmeOrigins();
    // The files the pod's /certs holds (Secret tessera-gateway-tls from npm run certs' gateway directory).
    const certs = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-k8s-gateway-env-'));
    try {
      generateDevCertificates(certs, ['gateway']);
      expect(gatewayContainer().volumeMounts).toContainEqual({ name: 'certs', mountPath: '/certs', readOnly: true });
      const resolved: Record<string, string> = {};
      for (const e of gatewayContainer().env as any[]) {
        const value =
          e.value ??
          (e.valueFrom.configMapKeyRef ? origins[e.valueFrom.configMapKeyRef.key] : e.valueFrom.secretKeyRef ? 'a'.repeat(64) : undefined);
        // Kubernetes expands $(NAME) from the variables before it.
        resolved[e.name] = String(value)
          .replace(/\$\((\w+)\)/g, (_m, name: string) => resolved[name] ?? '')
          .replace(/^\/certs\//, `${path.join(certs, 'gateway')}/`);
      }
      const config = parseGatewayConfig(resolved);
      expect(config.NODE_ENV).toBe('production');
      // The gateway names the fields origin in a form session's page URL (the fields now run in services/fields).
      expect(config.FIELDS_ORIGIN).toBe(origins.FIELDS_ORIGIN);
    } finally {
      fs.rmSync(certs, { recursive: true, force: true });
    }
  });

  it('keep a pod out of the Services until the fields listener answers, then probe it as before', () => {
    const c = gatewayContainer();
    expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: fieldsPort() });
    // Liveness waits for the startup probe: give it at least the 30 s liveness alone allowed.
    expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBeGreaterThanOrEqual(30);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: Number(envOf('gateway').PORT) });
  });

  it("admit the fields port wherever the gateway's network policy admits the API port", () => {
    const ingress = find('NetworkPolicy', 'gateway').spec.ingress as any[];
    const apiRules = ingress.filter((r) => r.ports.some((p: any) => p.port === Number(envOf('gateway').PORT)));
    expect(apiRules.length).toBeGreaterThan(0);
    for (const rule of apiRules) expect(rule.ports).toContainEqual({ protocol: 'TCP', port: fieldsPort() });
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
  });

  it('can run several vaults and proxies (--scale): no fixed names or host ports, and clients that dial every replica', () => {
    for (const name of ['vault', 'proxy']) {
      expect(compose.services[name].container_name).toBeUndefined();
      expect(compose.services[name].ports).toBeUndefined();
    }
    expect(compose.services.gateway.environment).toMatchObject({ VAULT_ADDR: 'dns:///vault:50051', PROXY_ADDR: 'dns:///proxy:50052' });
    expect(compose.services.proxy.environment.VAULT_ADDR).toBe('dns:///vault:50051');
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
const SERVICES = ['vault', 'proxy', 'gateway'] as const;
const README = fs.readFileSync(path.join(K8S_DIR, 'README.md'), 'utf8');
// merge: the services share their TLS variables through a `<<: *tls-own-certs` merge key.
const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, any> };
const podOf = (name: string): any => (name === 'redis' ? find('StatefulSet', 'redis') : find('Deployment', name)).spec.template.spec;

/** The files `npm run certs` puts in each directory a workload mounts. */
function certificateDirectories(): Record<string, string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-certs-layout-'));
  try {
    generateDevCertificates(dir, [...SERVICES, 'redis']);
    const listing: Record<string, string[]> = { '.': fs.readdirSync(dir).sort() };
    for (const name of [...SERVICES, 'redis']) {
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
  patterns: string[];
  rules: string[];
}
const ACL_FILE = path.join(ROOT, 'deploy', 'redis', 'users.acl');
const ACL_USERS: AclUser[] = (fs.existsSync(ACL_FILE) ? fs.readFileSync(ACL_FILE, 'utf8') : '')
  .split('\n')
  .filter((line) => line.startsWith('user '))
  .map((line) => {
    const [, name, ...rest] = line.trim().split(/\s+/);
    return {
      name: name!,
      on: rest.includes('on') && !rest.includes('off'),
      patterns: rest.filter((r) => r.startsWith('~')).map((r) => r.slice(1)),
      rules: rest.filter((r) => /^[+-]/.test(r)),
    };
  });
const aclUser = (name: string): AclUser => {
  const user = ACL_USERS.find((u) => u.name === name);
  if (!user) throw new Error(`no ACL user ${name}`);
  return user;
};
const canTouch = (user: AclUser, key: string): boolean => user.patterns.some((p) => globRegExp(p).test(key));
/** Last rule naming the command wins; categories are checked by the real Redis in redisAcl.test.ts. */
const explicitly = (user: AclUser, command: string): '+' | '-' | undefined => {
  const rule = user.rules.filter((r) => r.slice(1) === command).pop();
  return rule?.[0] as '+' | '-' | undefined;
};

/** The Redis key prefixes a service's store code writes ('tessera:…' string literals). */
function keyLiterals(dir: string): string[] {
  const found = new Set<string>();
  for (const file of fs.readdirSync(dir)) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const text = fs.readFileSync(path.join(dir, file), 'utf8').replace(/^\s*(\/\/|\*|\/\*).*$/gm, '');
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

/** Each secret variable docker-compose.yml takes from the environment, and the one service it belongs to. */
const COMPOSE_SECRETS: Record<string, string> = {
  VAULT_KEYS: 'vault',
  REDIS_VAULT_PASSWORD: 'vault',
  API_KEY_PEPPER: 'gateway',
  REDIS_GATEWAY_PASSWORD: 'gateway',
  REDIS_VAULT_PASSWORD_SHA256: 'redis',
  REDIS_GATEWAY_PASSWORD_SHA256: 'redis',
};
/** Variables compose takes from the environment that are settings, not secrets. */
const COMPOSE_SETTINGS = ['FIELDS_ORIGIN', 'API_ORIGIN'];
/** The environment variables (`${NAME…}`) a compose service's definition interpolates. */
const composeVariables = (name: string): string[] => [
  ...new Set([...JSON.stringify(compose.services[name]).matchAll(/\$\{(\w+)/g)].map((m) => m[1]!)),
];

describe('what each workload can read', () => {
  const layout = certificateDirectories();

  it('npm run certs gives each service a directory with only its own key, its certificate and ca.crt; ca.key stays outside', () => {
    expect(layout['.']).toContain('ca.key');
    for (const name of [...SERVICES, 'redis'])
      expect({ name, files: layout[name] }).toEqual({ name, files: ['ca.crt', 'tls.crt', 'tls.key'] });
  });

  it('Kubernetes: each pod mounts only its own TLS Secret, made from its own directory; no pod can read ca.key', () => {
    for (const name of [...SERVICES, 'redis']) {
      const pod = podOf(name);
      const secrets = (pod.volumes ?? []).filter((v: any) => v.secret || v.projected);
      expect({ name, secrets: secrets.map((v: any) => v.secret?.secretName) }).toEqual({ name, secrets: [`tessera-${name}-tls`] });
      expect(secrets[0].secret.items).toBeUndefined();
      const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === secrets[0].name);
      expect(mount).toMatchObject({ mountPath: '/certs', readOnly: true });
      for (const c of pod.containers) expect(c.envFrom).toBeUndefined();
      // The README creates each Secret from that service's own directory only.
      expect(README).toContain(`create secret generic tessera-${name}-tls --from-file=.tessera/certs/${name}\n`);
    }
    for (const name of SERVICES) {
      const env = Object.fromEntries(podOf(name).containers[0].env.map((e: any) => [e.name, e.value]));
      expect({ name, files: [env.TLS_CA_FILE, env.TLS_CERT_FILE, env.TLS_KEY_FILE] }).toEqual({
        name,
        files: ['/certs/ca.crt', '/certs/tls.crt', '/certs/tls.key'],
      });
    }
    expect(README).not.toMatch(/--from-file=\.tessera\/certs(\/)?[\s`]/);
    expect(JSON.stringify(docs)).not.toContain('ca.key');
  });

  it('Kubernetes: each pod gets only its own secret values, and only the vault and the gateway a Redis user', () => {
    const refs = (name: string): string[] =>
      podOf(name)
        .containers.flatMap((c: any) => c.env ?? [])
        .filter((e: any) => e.valueFrom?.secretKeyRef)
        .map((e: any) => `${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`)
        .sort();
    expect(refs('vault')).toEqual(['tessera-vault-secrets/REDIS_PASSWORD', 'tessera-vault-secrets/VAULT_KEYS']);
    expect(refs('gateway')).toEqual(['tessera-gateway-secrets/API_KEY_PEPPER', 'tessera-gateway-secrets/REDIS_PASSWORD']);
    expect(refs('proxy')).toEqual([]);
    // Redis verifies the passwords against their digests: it never holds a service's password.
    expect(refs('redis')).toEqual([
      'tessera-redis-secrets/REDIS_GATEWAY_PASSWORD_SHA256',
      'tessera-redis-secrets/REDIS_VAULT_PASSWORD_SHA256',
    ]);
    const envOf = (name: string) => Object.fromEntries(podOf(name).containers[0].env.map((e: any) => [e.name, e.value]));
    expect(envOf('vault')).toMatchObject({
      REDIS_URL: 'rediss://tessera-vault:$(REDIS_PASSWORD)@redis:6379',
      REDIS_TLS_CA_FILE: '/certs/ca.crt',
    });
    expect(envOf('gateway')).toMatchObject({
      REDIS_URL: 'rediss://tessera-gateway:$(REDIS_PASSWORD)@redis:6379',
      REDIS_TLS_CA_FILE: '/certs/ca.crt',
    });
    expect(envOf('proxy').REDIS_URL).toBeUndefined();
    // Kubernetes expands $(REDIS_PASSWORD) only from variables defined before it.
    for (const name of ['vault', 'gateway']) {
      const names = podOf(name).containers[0].env.map((e: any) => e.name);
      expect(names.indexOf('REDIS_PASSWORD')).toBeLessThan(names.indexOf('REDIS_URL'));
    }
  });

  it('Kubernetes: each workload reads only Secrets of its own (tessera-<name>-tls, tessera-<name>-secrets), so none is read by two', () => {
    const readers = new Map<string, string[]>();
    for (const name of WORKLOADS) {
      const own = [`tessera-${name}-secrets`, `tessera-${name}-tls`];
      for (const secret of secretsReadBy(name)) {
        expect({ name, secret, own: own.includes(secret) }).toEqual({ name, secret, own: true });
        readers.set(secret, [...(readers.get(secret) ?? []), name]);
      }
    }
    for (const [secret, names] of readers) expect({ secret, readers: names }).toEqual({ secret, readers: [names[0]] });
  });

  it("Kubernetes: the README's commands put each workload's material in its own Secret only, and give Redis digests, not passwords", () => {
    const created = readmeSecrets();
    const secretsOf = (name: string) => secretsReadBy(name).filter((secret) => secret.endsWith('-secrets'));
    // Exactly the Secrets the pods read, each holding exactly the keys its pod reads: nothing of another workload.
    expect([...created.keys()].sort()).toEqual(WORKLOADS.flatMap(secretsOf).sort());
    for (const name of WORKLOADS) {
      for (const secret of secretsOf(name)) {
        const keys = podOf(name)
          .containers.flatMap((c: any) => c.env ?? [])
          .filter((e: any) => e.valueFrom?.secretKeyRef?.name === secret)
          .map((e: any) => e.valueFrom.secretKeyRef.key as string);
        expect({ secret, keys: Object.keys(created.get(secret)!).sort() }).toEqual({ secret, keys: keys.sort() });
      }
    }
    // No value sits in two Secrets, and Redis's are the digests of the two services' passwords.
    const values = [...created.values()].flatMap((literals) => Object.values(literals));
    expect(new Set(values).size).toBe(values.length);
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(created.get('tessera-redis-secrets')).toEqual({
      REDIS_VAULT_PASSWORD_SHA256: sha256(created.get('tessera-vault-secrets')!.REDIS_PASSWORD!),
      REDIS_GATEWAY_PASSWORD_SHA256: sha256(created.get('tessera-gateway-secrets')!.REDIS_PASSWORD!),
    });
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
        const owner = COMPOSE_SECRETS[variable] ?? (COMPOSE_SETTINGS.includes(variable) ? name : 'unknown: add it to COMPOSE_SECRETS');
        expect({ name, variable, owner }).toEqual({ name, variable, owner: name });
      }
    }
    expect(Object.keys(compose.services).flatMap(composeVariables).sort()).toEqual(
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

  it('docker compose: each container mounts only its own certificate directory; Redis runs start.sh with the ACL and TLS', () => {
    const mounts = (name: string): string[] => compose.services[name].volumes ?? [];
    for (const name of [...SERVICES, 'redis']) {
      const certMounts = mounts(name).filter((v) => v.includes('.tessera'));
      expect({ name, certMounts }).toEqual({ name, certMounts: [`./.tessera/certs/${name}:/certs:ro`] });
    }
    for (const name of SERVICES) {
      expect(compose.services[name].environment).toMatchObject({
        TLS_CA_FILE: '/certs/ca.crt',
        TLS_CERT_FILE: '/certs/tls.crt',
        TLS_KEY_FILE: '/certs/tls.key',
      });
    }
    expect(compose.services.vault.environment.REDIS_URL).toMatch(/^rediss:\/\/tessera-vault:\$\{REDIS_VAULT_PASSWORD[^}]*\}@redis:6379$/);
    expect(compose.services.gateway.environment.REDIS_URL).toMatch(
      /^rediss:\/\/tessera-gateway:\$\{REDIS_GATEWAY_PASSWORD[^}]*\}@redis:6379$/,
    );
    expect(compose.services.proxy.environment.REDIS_URL).toBeUndefined();
    expect(compose.services.redis.entrypoint).toEqual(['sh', '/etc/tessera-redis/start.sh']);
    expect(mounts('redis')).toContain('./deploy/redis:/etc/tessera-redis:ro');
    expect(compose.services.redis.environment.TESSERA_REDIS_TLS_DIR).toBe('/certs');
  });
});

describe('Redis users (deploy/redis/users.acl)', () => {
  // The gateway's own stores and the shared ones it opens (edge's counters, merchant data).
  const gatewayKeys = [
    ...keyLiterals(path.join(ROOT, 'services', 'gateway', 'src', 'store')),
    ...keyLiterals(path.join(ROOT, 'packages', 'edge', 'src', 'store')),
    ...keyLiterals(path.join(ROOT, 'packages', 'merchant-data', 'src', 'store')),
  ];
  const vaultKeys = keyLiterals(path.join(ROOT, 'services', 'vault', 'src', 'store'));

  it('turn the default user off and define one user per Redis-using service', () => {
    expect(ACL_USERS.map((u) => [u.name, u.on])).toEqual([
      ['default', false],
      ['tessera-vault', true],
      ['tessera-gateway', true],
    ]);
    // Off, so no one logs in as it; with every permission, as Redis replays the AOF as the default user.
    expect(aclUser('default')).toMatchObject({ patterns: ['*'], rules: ['+@all'] });
  });

  it('give the gateway user every key its store writes and none of the card store', () => {
    const gateway = aclUser('tessera-gateway');
    expect(gatewayKeys.length).toBeGreaterThan(10);
    for (const key of gatewayKeys) expect({ key, allowed: canTouch(gateway, key) }).toEqual({ key, allowed: true });
    for (const key of vaultKeys) expect({ key, allowed: canTouch(gateway, key) }).toEqual({ key, allowed: false });
    for (const key of ['tessera:card:{tok_1}', 'tessera:cvv:{tok_1}', 'tessera:checkpoint:rewrap', 'tessera:card*', '*']) {
      expect({ key, allowed: canTouch(gateway, key) }).toEqual({ key, allowed: false });
    }
    // Cluster mode prefixes every gateway key with the {tessera-gateway} hash tag.
    expect(canTouch(gateway, '{tessera-gateway}:tessera:apikey:key_1')).toBe(true);
    for (const command of ['scan', 'randomkey', 'dbsize'])
      expect({ command, rule: explicitly(gateway, command) }).toEqual({ command, rule: '-' });
    expect(gateway.rules).toContain('-@dangerous');
  });

  it('give the vault user its card, CVV and checkpoint keys, and the CVC sessions it claims, only', () => {
    const vault = aclUser('tessera-vault');
    // The one shared store the vault opens (services/vault/src/openCvcSessions.ts): the gateway opens a grant, the vault claims it.
    const claimedByTheVault = ['tessera:cvc-session:'];
    expect(gatewayKeys).toEqual(expect.arrayContaining(claimedByTheVault));
    expect(vaultKeys).toEqual(expect.arrayContaining(['tessera:card:{', 'tessera:cvv:{x', 'tessera:checkpoint:x']));
    for (const key of [...vaultKeys, ...claimedByTheVault]) expect({ key, allowed: canTouch(vault, key) }).toEqual({ key, allowed: true });
    for (const key of gatewayKeys.filter((k) => !claimedByTheVault.includes(k))) {
      expect({ key, allowed: canTouch(vault, key) }).toEqual({ key, allowed: false });
    }
    expect(vault.rules).toContain('-@dangerous');
    expect(explicitly(vault, 'config|get')).toBe('+');
    expect(explicitly(vault, 'config|set')).toBeUndefined();
  });
});
