/**
 * Jest environment for tests that use SoftHSM2 in the test process itself. SoftHSM reads
 * SOFTHSM2_CONF from the real process environment when C_Initialize runs, but a test's
 * `process.env` is only a copy: this sets it on the worker before the copy is made, to a fresh
 * temporary directory that createSoftHsmToken (softHsm.ts) fills with the config and the token.
 * Use with the docblock `@jest-environment ./packages/test-support/src/softHsmEnvironment.js`.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

class SoftHsmEnvironment extends TestEnvironment {
  constructor(config, context) {
    process.env.SOFTHSM2_CONF = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-softhsm-')), 'softhsm2.conf');
    super(config, context);
  }
}

module.exports = SoftHsmEnvironment;
