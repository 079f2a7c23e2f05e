import type * as OpenPgp from 'openpgp' with { 'resolution-mode': 'import' };

/**
 * OpenPGP.js declares its types as an ES module, but ships a CommonJS build (its `require`
 * export) that the vault, a CommonJS program, loads here, once, with the ES module's types.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const openpgp = require('openpgp') as typeof OpenPgp;
export type PrivateKey = OpenPgp.PrivateKey;
export type PublicKey = OpenPgp.PublicKey;
