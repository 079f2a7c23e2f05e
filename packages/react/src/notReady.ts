import type { TesseraErrorLike } from './sdk';

/**
 * What `tokenize()`/`submit()` reject with before the component has fields to ask (tessera.js still
 * loading, or the component unmounted): the same code and type tessera.js gives for a frame not ready.
 */
export function notReadyError(component: string): Error & TesseraErrorLike {
  return Object.assign(new Error(`Tessera: <${component}> has no card fields yet (wait for onReady).`), {
    name: 'TesseraError',
    code: 'fields_not_ready',
    type: 'integration_error' as const,
  });
}
