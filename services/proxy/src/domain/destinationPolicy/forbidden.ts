import { TesseraError } from '@tessera/common';

/**
 * Every refusal of the destination policy: 400 psp_destination_forbidden on pspUrl. Messages say
 * which rule refused, never echoing the host, address or credentials from the URL.
 */
export function forbidden(message: string): TesseraError {
  return new TesseraError('psp_destination_forbidden', { param: 'pspUrl', message });
}
