import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, RequestHandler, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import { sendJson } from '@tessera/edge';
import { merchantPathSchema } from '../app/merchants';
import {
  cardImportPathSchema,
  cardImportReport,
  cardImportRequestSchema,
  getCardImport,
  requestCardImport,
  uploadCardImport,
  type CardImportDeps,
  type ImportCaller,
} from '../app/cardImports';
import { adminOf, callerOf } from './sessionRoutes';
import { parseBody, parsePath } from './validation';

/** The file's media types: what gpg makes, or any bytes. */
const FILE_TYPES = ['application/pgp-encrypted', 'application/octet-stream'];

/**
 * `/admin/v1/merchants/{merchantId}/imports` and `/admin/v1/imports/{importId}[/file|/report]`:
 * card imports through the admin API (app/cardImports.ts). The file is streamed, never parsed
 * as JSON nor held whole. Absent deps (no import store): 404.
 */
export function registerImportRoutes(api: Router, deps: CardImportDeps | undefined, body: RequestHandler[]): void {
  const depsOf = (): CardImportDeps => {
    if (deps === undefined) throw new TesseraError('route_not_found');
    return deps;
  };
  const importerOf = (res: Response): ImportCaller => ({ ...callerOf(res), mfaEnabled: adminOf(res).operator.mfa !== undefined });
  // An id that cannot be one is simply not found, as an unknown one is.
  const importIdOf = (req: Request): string => {
    const parsed = cardImportPathSchema.safeParse(req.params);
    if (!parsed.success) throw new TesseraError('import_not_found');
    return parsed.data.importId;
  };

  api.post('/merchants/:merchantId/imports', ...body, async (req: Request, res: Response) => {
    const { merchantId } = parsePath(merchantPathSchema, req);
    const input = parseBody(cardImportRequestSchema, req);
    sendJson(res, 202, await requestCardImport(depsOf(), importerOf(res), merchantId, input));
  });

  api.get('/imports/:importId', async (req: Request, res: Response) => {
    sendJson(res, 200, await getCardImport(depsOf(), callerOf(res), importIdOf(req)));
  });

  api.put('/imports/:importId/file', async (req: Request, res: Response) => {
    const d = depsOf();
    const importId = importIdOf(req);
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (!FILE_TYPES.includes(type)) {
      throw new TesseraError('unsupported_media_type', {
        message: 'Send the encrypted file as application/pgp-encrypted or application/octet-stream.',
      });
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > d.maxUploadBytes) {
      throw new TesseraError('body_too_large', { message: `The file is larger than this service takes (${d.maxUploadBytes} bytes).` });
    }
    sendJson(res, 202, await uploadCardImport(d, importerOf(res), importId, req as AsyncIterable<Buffer>));
  });

  api.get('/imports/:importId/report', async (req: Request, res: Response) => {
    const importId = importIdOf(req);
    const { chunks } = await cardImportReport(depsOf(), importerOf(res), importId);
    res.status(200);
    res.setHeader('content-type', 'application/pgp-encrypted');
    res.setHeader('content-disposition', `attachment; filename="${importId}-report.pgp"`);
    res.setHeader('cache-control', 'no-store');
    // Headers are out: a chunk that has expired meanwhile can only cut the download short.
    await pipeline(Readable.from(chunks), res).catch(() => res.destroy());
  });
}
