import { TesseraError } from '@tessera/common';

export const PSP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type PspMethod = (typeof PSP_METHODS)[number];

/** Case-insensitive (the gateway sends upper case); anything outside the product's five methods is refused. */
export function parsePspMethod(method: string): PspMethod {
  const upper = method.toUpperCase();
  const found = PSP_METHODS.find((m) => m === upper);
  if (found === undefined) {
    throw new TesseraError('parameter_invalid', { param: 'method', message: 'method must be one of get, post, put, patch, delete.' });
  }
  return found;
}
