import type { IncomingMessage } from 'node:http';
import { TesseraError } from '@tessera/common';

/**
 * A raw request body as bytes, at most `limit` of them: one whose Content-Length announces more is
 * refused before it is read, and one that sends more is refused as soon as it does
 * (body_too_large), so nothing of it is forwarded.
 */
export async function readBoundedBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new TesseraError('body_too_large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new TesseraError('body_too_large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
