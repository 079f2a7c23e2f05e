#!/usr/bin/env node
// `npm run keys` / `npm run webhooks` / `npm run vault`: runs the built CLI (its dist/ file, the first argument) with the
// rest of the command line, without building first: a rebuild per command took half a minute.
// `npm start` builds; after a change to the code, `npm run build` once.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [script, ...args] = process.argv.slice(2);
const entry = path.join(root, script ?? '');
if (script === undefined || !fs.existsSync(entry)) {
  console.error(`${script ?? 'the CLI'} is not built yet: run npm run build (or npm start, which builds) once, then this command again.`);
  process.exit(1);
}
const run = spawnSync(process.execPath, [entry, ...args], { stdio: 'inherit' });
process.exit(run.status ?? 1);
