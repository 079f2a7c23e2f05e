import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The sandbox's own TLS files: a CA that a client (here, Tessera's proxy) trusts, and a leaf for the sandbox's host names. */
export interface SandboxCertificate {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * A test CA and a leaf for `hosts` (DNS names; 127.0.0.1 is added as an address) in `dir`, made
 * with openssl once and kept: the sandbox PSP serves HTTPS with it, as a real PSP would, so the
 * forward proxy's path (client → Tessera → PSP over TLS) runs on one machine. For development
 * and tests only: the CA key sits beside the certificates.
 */
export function ensureSandboxCertificate(dir: string, hosts: readonly string[] = ['localhost']): SandboxCertificate {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files: SandboxCertificate = {
    caFile: path.join(dir, 'sandbox-ca.pem'),
    certFile: path.join(dir, 'sandbox-psp.pem'),
    keyFile: path.join(dir, 'sandbox-psp-key.pem'),
  };
  const namesFile = path.join(dir, 'sandbox-psp.names');
  const names = [...hosts].sort().join(',');
  if (Object.values(files).every((f) => fs.existsSync(f)) && fs.existsSync(namesFile) && fs.readFileSync(namesFile, 'utf8') === names) {
    return files;
  }
  const run = (args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run([
    'req',
    '-x509',
    ...newKey,
    '-keyout',
    'sandbox-ca-key.pem',
    '-out',
    'sandbox-ca.pem',
    '-days',
    '3650',
    '-subj',
    '/CN=Tessera sandbox PSP test CA',
  ]);
  run(['req', ...newKey, '-keyout', 'sandbox-psp-key.pem', '-out', 'sandbox-psp.csr', '-subj', `/CN=${hosts[0] ?? 'localhost'}`]);
  const san = [...hosts.map((h) => `DNS:${h}`), 'IP:127.0.0.1'].join(',');
  fs.writeFileSync(path.join(dir, 'sandbox-psp.ext'), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`);
  run([
    'x509',
    '-req',
    '-in',
    'sandbox-psp.csr',
    '-CA',
    'sandbox-ca.pem',
    '-CAkey',
    'sandbox-ca-key.pem',
    '-CAcreateserial',
    '-out',
    'sandbox-psp.pem',
    '-days',
    '825',
    '-extfile',
    'sandbox-psp.ext',
  ]);
  fs.writeFileSync(namesFile, names);
  return files;
}
