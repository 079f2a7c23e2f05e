#!/usr/bin/env node
// Builds the scripts a browser runs: tessera.js (the merchant's page), fields.js (inside the
// card-fields iframe) and hosted.js (the hosted payment page, sharing the fields' input code). tsc type-checks each entry and joins it with what it imports (the card
// rules of packages/common included) into one file of AMD modules; the few lines below turn that
// into a self-contained script, so no bundler is needed. Also writes manifest.json with the
// Subresource Integrity hash of tessera.js (published in docs/browser.md; a test keeps it current).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(here, 'dist', 'browser');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const ENTRIES = [
  { name: 'tessera.js', project: 'tsconfig.tessera.json', entry: 'packages/js/src/sdk/tessera' },
  { name: 'fields.js', project: 'tsconfig.fields.json', entry: 'packages/js/src/fields/page' },
  { name: 'hosted.js', project: 'tsconfig.hosted.json', entry: 'packages/js/src/hosted/page' },
];

/** A minimal AMD loader, private to the script: modules run once, in dependency order, on demand. */
function wrap(amd, entry, name) {
  return `/*! Tessera ${name} | built from packages/js */
(function () {
  "use strict";
  var factories = {};
  var cache = {};
  function define(name, deps, factory) { factories[name] = [deps, factory]; }
  function load(name) {
    if (Object.prototype.hasOwnProperty.call(cache, name)) return cache[name];
    var spec = factories[name];
    if (!spec) throw new Error("tessera: missing module " + name);
    var exports = {};
    cache[name] = exports;
    var args = spec[0].map(function (dep) { return dep === "require" ? undefined : dep === "exports" ? exports : load(dep); });
    spec[1].apply(undefined, args);
    return exports;
  }
${amd.trim()}
  load(${JSON.stringify(entry)});
})();
`;
}

fs.mkdirSync(out, { recursive: true });
const manifest = {};
for (const { name, project, entry } of ENTRIES) {
  // Incremental (tsconfig.browser.json): the AMD file and its .tsbuildinfo stay in dist/amd,
  // outside what the gateway serves, so npm start and npm run build, which run this each time,
  // re-check only what changed. Not `tsc -b`: its up-to-date check looks at the entry file alone,
  // not at what it imports.
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(here, project)], { cwd: here, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  const amd = fs.readFileSync(path.join(here, 'dist', 'amd', name), 'utf8');
  // Minified: every merchant page downloads tessera.js, and the fields page inlines fields.js
  // into each load of the iframe. esbuild only minifies here (no lowering: tsc chose the target).
  const script = transformSync(wrap(amd, entry, name), { minify: true, legalComments: 'inline' }).code;
  fs.writeFileSync(path.join(out, name), script);
  manifest[name] = {
    integrity: `sha384-${crypto.createHash('sha384').update(script).digest('base64')}`,
    bytes: Buffer.byteLength(script),
  };
}
// An older build kept the AMD files here, where the gateway serves from.
fs.rmSync(path.join(out, 'amd'), { recursive: true, force: true });
fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');

// `npm run docs:browser` (root): writes the new hash into docs/browser.md after a change to tessera.js.
// Every tessera.js tag of the page shows the hash: the SRI section's and the five-minute how-to's.
if (process.argv.includes('--update-docs')) {
  const docs = path.resolve(here, '../../docs/browser.md');
  const text = fs.readFileSync(docs, 'utf8');
  fs.writeFileSync(docs, text.replace(/integrity="sha384-[A-Za-z0-9+/=]+"/g, `integrity="${manifest['tessera.js'].integrity}"`));
}
