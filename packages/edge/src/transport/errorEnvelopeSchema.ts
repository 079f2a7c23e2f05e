import { z } from 'zod';
import { ERROR_CATALOGUE, type ErrorCode, type ErrorType } from '@tessera/common';

/**
 * The error envelope every Tessera HTTP service answers with (envelope.ts's sendError), as a zod
 * schema for the services' OpenAPI documents: one shape, whichever service documents it.
 */
const errorCodes = Object.keys(ERROR_CATALOGUE) as [ErrorCode, ...ErrorCode[]];
const errorTypes = [...new Set(Object.values(ERROR_CATALOGUE).map((spec) => spec.type))] as [ErrorType, ...ErrorType[]];

export const errorEnvelopeSchema = z.object({
  error: z.object({
    type: z.enum(errorTypes),
    code: z.enum(errorCodes).meta({ description: 'Stable machine-readable code; see docs/errors.md.' }),
    message: z.string().meta({ description: 'For humans; never contains submitted card data.' }),
    param: z.string().optional().meta({ description: 'The request field the error is about, when there is one.' }),
    requestId: z.string(),
  }),
});
