#!/usr/bin/env node
// `npm run certs`: a development CA and one certificate per service (SAN DNS:gateway, DNS:vault,
// DNS:proxy, DNS:fields, DNS:inbound, DNS:redis) for mutual TLS between the services and TLS to Redis (the admin
// service speaks to Redis only, whose CA it needs, not a certificate of its own). Files go to
// $TESSERA_STATE_DIR/certs (default .tessera/certs): ca.crt and ca.key at the top (ca.key is
// never deployed), and per service a directory <service>/ with only tls.crt, tls.key and ca.crt,
// which is what that service mounts. An existing CA is reused, service certificates are re-issued.
// Production uses certificates from your own PKI laid out the same way (or set TLS_PEER_*).
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { generateDevCertificates, devTlsFiles } = require(path.join(root, 'packages/protos/dist/index.js'));

const stateDir = path.resolve(root, process.env.TESSERA_STATE_DIR ?? '.tessera');
const dir = path.join(stateDir, 'certs');
const services = ['gateway', 'vault', 'proxy', 'fields', 'inbound', 'redis'];
generateDevCertificates(dir, services);

const vault = devTlsFiles(dir, 'vault');
console.log(`Development CA and service certificates written to ${dir}`);
console.log('Give each service only its own directory (never ca.key), for example the vault:');
console.log(`  TLS_CA_FILE=${vault.caFile}`);
console.log(`  TLS_CERT_FILE=${vault.certFile}`);
console.log(`  TLS_KEY_FILE=${vault.keyFile}`);
