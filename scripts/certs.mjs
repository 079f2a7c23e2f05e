#!/usr/bin/env node
// `npm run certs`: a development CA and one certificate per service (SAN DNS:gateway, DNS:vault,
// DNS:proxy) for mutual TLS between the services. Files go to $TESSERA_STATE_DIR/certs
// (default .tessera/certs); an existing CA is reused, service certificates are re-issued.
// Production uses certificates from your own PKI with the same names (or set TLS_PEER_*).
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { generateDevCertificates } = require(path.join(root, 'packages/protos/dist/index.js'));

const stateDir = path.resolve(root, process.env.TESSERA_STATE_DIR ?? '.tessera');
const dir = path.join(stateDir, 'certs');
const services = ['gateway', 'vault', 'proxy'];
generateDevCertificates(dir, services);

console.log(`Development CA and service certificates written to ${dir}`);
console.log('Give each service its own files, for example the vault:');
console.log(`  TLS_CA_FILE=${path.join(dir, 'ca.crt')}`);
console.log(`  TLS_CERT_FILE=${path.join(dir, 'vault.crt')}`);
console.log(`  TLS_KEY_FILE=${path.join(dir, 'vault.key')}`);
