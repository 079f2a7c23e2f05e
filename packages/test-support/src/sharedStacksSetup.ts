/**
 * The integration project's globalSetup: a directory for the shared stacks (sharedStack.ts), named
 * to the workers through the environment they inherit. Jest loads this file without the project's
 * moduleNameMapper, so it uses Node's modules only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setUpSharedStacks(): void {
  // TESSERA_SHARED_STACKS=off: every file starts a stack of its own again (to tell a leak between files from a bug).
  if (process.env.TESSERA_SHARED_STACKS === 'off') return;
  process.env.TESSERA_SHARED_STACKS_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-shared-stacks-'));
}
