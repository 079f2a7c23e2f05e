/**
 * What the forward proxy's integration tests share: the sandbox PSP over HTTPS behind a fake DNS
 * server (PSP host names resolve to loopback for the stack's proxy only, never through public
 * DNS), the stack options that point the proxy at them and open FORWARD_PROXY_PORT, and a
 * merchant's unmodified stripe SDK charging through the forward proxy in a process of its own.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureSandboxCertificate, type SandboxCertificate } from '@tessera/sandbox-psp';
import { apiClient, freePort, ManagedProcess, ROOT, startFakeDns, type FakeDns, type Stack } from './harness';

export interface SandboxPspOverTls {
  dns: FakeDns;
  tls: SandboxCertificate;
  /** The sandbox's HTTPS port (the host names are the fake DNS server's). */
  port: number;
  /** The gateway's FORWARD_PROXY_PORT, for the stack. */
  forwardProxyPort: number;
  /** What useStack's serviceEnv needs for the forward proxy: the proxy trusts the sandbox's CA and asks the fake DNS. */
  serviceEnv(): { proxy: Record<string, string>; gateway: Record<string, string> };
}

/**
 * Starts (beforeAll) and stops (afterAll) a fake DNS server answering `resolve` and the sandbox
 * PSP over HTTPS with a certificate for `hosts`. Declare it before useStack, and give useStack its
 * options as a function, so that `serviceEnv()` is read once these are up.
 */
export function useSandboxPspOverTls(options: { hosts: string[]; resolve: (name: string) => string | undefined }): SandboxPspOverTls {
  const fixture = {} as SandboxPspOverTls;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-sandbox-tls-'));
  let sandbox: ManagedProcess | undefined;
  beforeAll(async () => {
    fixture.dns = await startFakeDns(options.resolve);
    fixture.tls = ensureSandboxCertificate(dir, options.hosts);
    fixture.port = await freePort();
    fixture.forwardProxyPort = await freePort();
    fixture.serviceEnv = () => ({
      proxy: { PSP_DNS_SERVERS: fixture.dns.server, NODE_EXTRA_CA_CERTS: fixture.tls.caFile },
      gateway: { FORWARD_PROXY_PORT: String(fixture.forwardProxyPort) },
    });
    sandbox = new ManagedProcess('sandbox', process.execPath, [path.join(ROOT, 'packages/sandbox-psp/dist/main.js')], {
      PATH: process.env.PATH,
      SANDBOX_PSP_PORT: String(await freePort()),
      SANDBOX_PSP_TLS_PORT: String(fixture.port),
      SANDBOX_PSP_TLS_CERT_FILE: fixture.tls.certFile,
      SANDBOX_PSP_TLS_KEY_FILE: fixture.tls.keyFile,
    }).start();
    await sandbox.waitForOutput('sandbox psp listening over https');
  });
  afterAll(async () => {
    await sandbox?.stop();
    await fixture.dns?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return fixture;
}

/** HTTPS_PROXY as docs/proxies.md tells a merchant to set it: the secret key as the proxy password. */
export const forwardProxyUrl = (port: number, secretKey: string): string => `http://x:${secretKey}@127.0.0.1:${port}`;

/** GET /v1/forward-proxy/ca.pem with the secret key, written to `file` for the client to trust. */
export async function downloadForwardProxyCa(stack: Stack, secretKey: string, file: string): Promise<string> {
  const ca = await apiClient(stack, secretKey)('GET', '/v1/forward-proxy/ca.pem');
  if (ca.status !== 200) throw new Error(`GET /v1/forward-proxy/ca.pem answered ${ca.status}: ${ca.text}`);
  fs.writeFileSync(file, ca.text);
  return ca.text;
}

/**
 * The merchant's process as docs/proxies.md sets it up: the unmodified stripe SDK, HTTPS_PROXY for
 * https-proxy-agent, the merchant's CA trusted through NODE_EXTRA_CA_CERTS (https-proxy-agent's own
 * `ca` option is for the connection to the proxy, not the tunnelled one). Its own process, so that
 * its requests are real. Resolves with what it printed: the charge as JSON.
 */
export async function chargeWithStripeSdk(options: {
  proxyUrl: string;
  caFile: string;
  host: string;
  port: number;
  cardNumber: string;
}): Promise<string> {
  const client = `
    const Stripe = require('stripe');
    const { HttpsProxyAgent } = require('https-proxy-agent');
    const stripe = new Stripe('sk_test_sandbox', {
      host: ${JSON.stringify(options.host)},
      port: ${options.port},
      protocol: 'https',
      httpAgent: new HttpsProxyAgent(process.env.HTTPS_PROXY),
      maxNetworkRetries: 0,
    });
    stripe.charges
      .create({ amount: 1000, currency: 'eur', card: { number: process.argv[1], exp_month: 12, exp_year: 2031, cvc: '123' } })
      .then((charge) => console.log(JSON.stringify(charge)), (err) => { console.error(err.message, err.detail && err.detail.message); process.exit(1); });
  `;
  // Not spawnSync: the fake DNS server answers the proxy from this process's event loop.
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', client, options.cardNumber], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH, HTTPS_PROXY: options.proxyUrl, NODE_EXTRA_CA_CERTS: options.caFile },
  });
  return stdout;
}
