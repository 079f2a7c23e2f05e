import type { TesseraError } from './sdk';

/**
 * What `tokenize()`/`submit()` reject with before the component has fields to ask (tessera.js still
 * loading, or the component unmounted): the same code and type tessera.js gives for a frame not ready.
 */
export function notReadyError(component: string): TesseraError {
  // The class itself lives in tessera.js, which may not have loaded: an Error of the same shape (isTesseraError() knows it).
  return Object.assign(new Error(`Tessera: <${component}> has no card fields yet (wait for onReady).`), {
    name: 'TesseraError',
    code: 'fields_not_ready' as const,
    type: 'integration_error' as const,
  });
}
