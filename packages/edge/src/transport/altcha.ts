import { createRequire } from 'node:module';
import type * as AltchaV1 from 'altcha-lib/v1' with { 'resolution-mode': 'import' };

/** A challenge as issued: what the browser solves. */
export type Challenge = Awaited<ReturnType<typeof AltchaV1.createChallenge>>;

/**
 * altcha-lib's v1 API (the challenge format its widget and solvers speak). The package ships
 * CommonJS under its `require` condition but types only for its ES modules, so the types come
 * from there and the code from here: a CommonJS service cannot `import` it otherwise, and a
 * dynamic import() would not run under Jest's CommonJS runtime.
 */
export const altcha = createRequire(__filename)('altcha-lib/v1') as typeof AltchaV1;
