/**
 * A body as the filter engine reads it, and back. UTF-8 when it is valid UTF-8; otherwise Latin-1,
 * which maps every byte to one character and back, so a binary body (an upload) that holds no card
 * data leaves exactly as it came, and digits (ASCII) are found in either.
 */
export type BodyEncoding = 'utf8' | 'latin1';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decodeBody(body: Buffer): { text: string; encoding: BodyEncoding } {
  try {
    return { text: strictUtf8.decode(body), encoding: 'utf8' };
  } catch {
    return { text: body.toString('latin1'), encoding: 'latin1' };
  }
}

export function encodeBody(text: string, encoding: BodyEncoding): Buffer {
  return Buffer.from(text, encoding);
}
