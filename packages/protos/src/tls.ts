/**
 * Mutual TLS between gateway, vault and proxy (PCI DSS 4.2.1 / 8.3: strong cryptography and
 * authenticated service identities inside the cardholder-data environment). Every service has a
 * certificate from one private CA whose SAN names the service (DNS:gateway, DNS:vault, DNS:proxy);
 * servers require a client certificate from that CA and then authorize each RPC by the caller's
 * SAN, so e.g. only the proxy may ask the vault to Render card data.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@tessera/common';

export interface TlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** Errors name the file, never its contents (a key file is key material). */
export function readTlsMaterial(files: TlsFiles): TlsMaterial {
  const read = (what: string, file: string): Buffer => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new Error(`cannot read the TLS ${what} file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  };
  return { ca: read('CA', files.caFile), cert: read('certificate', files.certFile), key: read('key', files.keyFile) };
}

/** Without material: plaintext (development on loopback only; the config refuses it in production). */
export function serverCredentials(tls: TlsMaterial | undefined): grpc.ServerCredentials {
  if (tls === undefined) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true);
}

export function clientCredentials(tls: TlsMaterial | undefined): grpc.ChannelCredentials {
  if (tls === undefined) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(tls.ca, tls.key, tls.cert);
}

/**
 * Services are addressed by host:port (often an IP), but identified by their service name: the
 * server certificate must carry `serverName` as a SAN, whatever address was dialled.
 */
export function tlsChannelOptions(tls: TlsMaterial | undefined, serverName: string): grpc.ChannelOptions {
  return tls === undefined ? {} : { 'grpc.ssl_target_name_override': serverName, 'grpc.default_authority': serverName };
}

/** DNS names in the verified client certificate of this call; empty for plaintext or no certificate. */
export function peerServiceNames(call: { getAuthContext?: () => { sslPeerCertificate?: { subjectaltname?: string } } | null }): string[] {
  const san = call.getAuthContext?.()?.sslPeerCertificate?.subjectaltname ?? '';
  return san
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4));
}

// Handlers differ in request/response types; the guard only needs the call's auth context.
// Server-streaming handlers get no callback: a refusal ends their stream with the status instead.
type AnyHandler = (call: never, callback?: grpc.sendUnaryData<unknown>) => void;

/**
 * Wraps every unary or server-streaming handler so it runs only when the caller's certificate names one of the
 * services allowed for that method; otherwise PERMISSION_DENIED before the handler sees anything.
 * A method missing from the policy is denied (fail closed). With `enforce` false (plaintext
 * development) the handlers are returned unchanged.
 */
export function restrictCallers<H extends object>(handlers: H, policy: Record<keyof H & string, readonly string[]>, enforce: boolean): H {
  if (!enforce) return handlers;
  const guarded: Record<string, AnyHandler> = {};
  for (const [method, handler] of Object.entries(handlers) as [string, AnyHandler][]) {
    const allowed = (policy as Record<string, readonly string[] | undefined>)[method] ?? [];
    guarded[method] = (call, callback) => {
      const names = peerServiceNames(call as Parameters<typeof peerServiceNames>[0]);
      if (!names.some((name) => allowed.includes(name))) {
        const denied = { code: grpc.status.PERMISSION_DENIED, details: `caller is not allowed to call ${method}` };
        if (callback) callback(denied);
        else (call as unknown as grpc.ServerWritableStream<unknown, unknown>).emit('error', denied);
        return;
      }
      handler(call, callback);
    };
  }
  return guarded as H;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Is this bind/dial address a loopback one (where development may run without TLS)? Only an IP
 * literal in 127.0.0.0/8 or `::1`, or the name `localhost` (which /etc/hosts maps to loopback).
 * Any other name is a DNS name, whatever it starts with: `127.0.0.1.nip.io` or `127.evil.example`
 * resolve wherever their owner likes.
 */
export function isLoopbackAddress(hostPort: string): boolean {
  const host = hostPort
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  if (host === 'localhost') return true;
  if (isIPv4(host)) return LOOPBACK.check(host, 'ipv4');
  if (isIPv6(host)) return LOOPBACK.check(host, 'ipv6');
  return false;
}

/** Where a gRPC server binds: `variable` is the setting that chose `address` (VAULT_ADDR, PROXY_ADDR). */
export interface ServerBinding {
  service: string;
  variable: string;
  address: string;
}

/**
 * The TLS material a gRPC server binds with, read from `files` (TLS_*_FILE). Without files the
 * server runs plaintext without caller authentication: allowed on a loopback address only (with a
 * warning), anywhere else the service stops with exit 78 and what to set.
 */
export function serverTlsOrExit(files: TlsFiles | undefined, binding: ServerBinding, logger: Logger): TlsMaterial | undefined {
  if (files !== undefined) return readTlsMaterial(files);
  if (!isLoopbackAddress(binding.address)) {
    process.stderr.write(
      `[${binding.service}] ${binding.variable} is not a loopback address: set TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE (plaintext gRPC is for loopback only)\n`,
    );
    process.exit(78);
  }
  logger.warn(
    'TLS is not configured: gRPC runs in PLAINTEXT without caller authentication. Development on loopback only; set TLS_CA_FILE, TLS_CERT_FILE, TLS_KEY_FILE (npm run certs).',
  );
  return undefined;
}

const CERT_DAYS = '825';

/** `openssl req` options for a fresh, unencrypted P-256 key, as every certificate here has. */
const NEW_P256_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Development certificates (`npm run certs`): a CA in `dir` (created once, reused) and one
 * EC P-256 certificate per name, SAN DNS:<name>, usable as server and client certificate.
 * Each name gets its own directory `<name>/` holding only what that service may see: `tls.crt`,
 * `tls.key` (mode 0600) and a copy of `ca.crt` (the names cert-manager gives a Secret's keys), so
 * a deployment mounts exactly that directory and never `ca.key` or another service's key.
 * `<name>.crt` / `<name>.key` beside the CA stay as links into it for the older flat layout.
 */
export function generateDevCertificates(dir: string, names: readonly string[]): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!fs.existsSync(path.join(dir, 'ca.crt')) || !fs.existsSync(path.join(dir, 'ca.key'))) {
    openssl(
      [
        'req',
        '-x509',
        ...NEW_P256_KEY,
        '-keyout',
        'ca.key',
        '-out',
        'ca.crt',
        '-days',
        CERT_DAYS,
        '-subj',
        '/CN=Tessera development CA',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    );
    fs.chmodSync(path.join(dir, 'ca.key'), 0o600);
  }
  for (const name of names) {
    if (!/^[a-z0-9-]{1,63}$/.test(name)) throw new Error(`certificate name must be a DNS label: ${name}`);
    const own = path.join(dir, name);
    fs.mkdirSync(own, { recursive: true, mode: 0o700 });
    const ext = path.join(dir, `${name}.ext`);
    fs.writeFileSync(
      ext,
      [
        `subjectAltName=DNS:${name}`,
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature',
        'extendedKeyUsage=serverAuth,clientAuth',
      ].join('\n') + '\n',
    );
    const keyFile = path.join(name, 'tls.key');
    const certFile = path.join(name, 'tls.crt');
    openssl(['req', ...NEW_P256_KEY, '-keyout', keyFile, '-out', `${name}.csr`, '-subj', `/CN=${name}`], dir);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-set_serial',
        `0x${randomBytes(16).toString('hex')}`,
        '-days',
        CERT_DAYS,
        '-sha256',
        '-extfile',
        ext,
        '-out',
        certFile,
      ],
      dir,
    );
    fs.chmodSync(path.join(dir, keyFile), 0o600);
    fs.copyFileSync(path.join(dir, 'ca.crt'), path.join(own, 'ca.crt'));
    for (const [flat, target] of [
      [`${name}.crt`, certFile],
      [`${name}.key`, keyFile],
    ] as const) {
      fs.rmSync(path.join(dir, flat), { force: true });
      fs.symlinkSync(target, path.join(dir, flat));
    }
    fs.rmSync(path.join(dir, `${name}.csr`));
    fs.rmSync(ext);
  }
}

/** One service's files as `generateDevCertificates` lays them out: its own directory only. */
export function devTlsFiles(dir: string, name: string): TlsFiles {
  const own = path.join(dir, name);
  return { caFile: path.join(own, 'ca.crt'), certFile: path.join(own, 'tls.crt'), keyFile: path.join(own, 'tls.key') };
}
