import fs from 'node:fs';
import path from 'node:path';

/**
 * Outside production, secrets that were not configured are generated once and kept in a
 * git-ignored folder so that every local process (and restarts) agree on them. Creation uses
 * O_EXCL so two processes starting together end up with the same value.
 */
export function loadOrCreateDevSecret(dir: string, name: string, generate: () => string): { value: string; created: boolean } {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, name);
  try {
    fs.writeFileSync(file, generate() + '\n', { flag: 'wx', mode: 0o600 });
    return { value: fs.readFileSync(file, 'utf8').trim(), created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const value = fs.readFileSync(file, 'utf8').trim();
    if (value.length > 0) return { value, created: false };
    // Another process created the file and has not written it yet.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
  throw new Error(`dev secret file ${file} is empty`);
}
