#!/usr/bin/env node
// The system programs the test suite drives for real (a Redis server, a browser, an HSM). `npm test` runs this first so a
// fresh machine needs no step beyond the README's two commands: as root it installs what is missing from Debian's
// packages; otherwise it names what is missing and the one command that provides it, and the suite does not start
// (no browser test is ever skipped silently).
import { ensureTools, TEST_TOOLS } from './system-tools.mjs';

if (!ensureTools(TEST_TOOLS, 'test-tools')) process.exit(1);
