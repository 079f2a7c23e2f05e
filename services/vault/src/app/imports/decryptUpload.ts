import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openpgp, type PrivateKey } from '../../domain/openpgp';
import { MAX_RECORD_BYTES } from '../../domain/importFormats';
import type { ImportStorePort } from './ports';

/**
 * The uploaded file as a stream of lines, decrypted as it is read from Redis (one chunk at a
 * time: a pull stream, so nothing is read ahead of what the parser takes).
 *
 * OpenPGP.js holds back a non-AEAD message's plaintext until its integrity check at the end, i.e.
 * the whole file in memory, unless told to release it early (allowUnauthenticatedStream). Hence
 * two passes (docs/adr/0015): `verify` reads the whole message and throws if it fails its
 * integrity check, noting each ciphertext chunk's SHA-256; `lines` then decrypts again, releasing
 * plaintext early, but only of chunks whose hashes match the verified ones, so nothing unverified
 * is ever parsed, even if someone rewrites the chunks in Redis in between.
 */
export class FileNotDecryptable extends Error {
  constructor(readonly reason: 'file_not_decryptable' | 'file_changed') {
    super(
      reason === 'file_changed' ? 'the uploaded file changed after it was verified' : 'the file cannot be decrypted with the import key',
    );
  }
}

export interface Line {
  /** 1-based line number in the decrypted file. */
  number: number;
  /** The line without its end of line, or null when it was longer than MAX_RECORD_BYTES (dropped unread). */
  text: string | null;
}

/** How much ciphertext OpenPGP.js is handed at a time (a stored chunk is 1 MiB). */
const DECRYPT_PIECE_BYTES = 64 * 1024;
/** The verify pass collects its garbage after this many stored chunks (see collectGarbage; every two peaked at 201 MB once). */
const VERIFY_CHUNKS_PER_COLLECTION = 1;

/**
 * A full garbage collection, for the verify pass alone. Every stored chunk becomes several MiB
 * of buffers (the Redis reply, OpenPGP.js's copies at each of its stages), garbage as soon as
 * the next chunk is read, but freed only by a major GC, which V8 starts once some 64 MB of
 * such memory piled up. The verify pass decrypts as fast as Redis answers, with hardly any other
 * allocation, so it reached that pile, and glibc kept the malloc heap it grew to for the rest
 * of the import (docs/PERFORMANCE.md, "Memory (issue 29, session 37)"). A collection after every
 * chunk keeps the pile under 15 MB for a second or two of CPU per million cards. The
 * tokenizing pass needs none: its own allocations make V8 collect often enough.
 */
let collectGarbage = (): void => {
  // `gc` exists only in a context made while the flag is set; the flag is put back at once.
  setFlagsFromString('--expose-gc');
  try {
    collectGarbage = runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  collectGarbage();
};

function chunkStream(
  store: ImportStorePort,
  id: string,
  chunks: number,
  onChunk: (index: number, chunk: Buffer) => void,
): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (index >= chunks) {
          controller.close();
          return;
        }
        const chunk = await store.uploadChunk(id, index);
        if (chunk === null) throw new FileNotDecryptable('file_changed');
        onChunk(index, chunk);
        index += 1;
        // Views, not copies: OpenPGP.js copies what it is given at each of its stages, and
        // 64 KiB copies instead of 1 MiB ones left a third less in the malloc heap (docs/PERFORMANCE.md).
        for (let offset = 0; offset < chunk.byteLength; offset += DECRYPT_PIECE_BYTES) {
          const length = Math.min(DECRYPT_PIECE_BYTES, chunk.byteLength - offset);
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset + offset, length));
        }
      },
    },
    { highWaterMark: 1 },
  );
}

async function decryptedStream(
  store: ImportStorePort,
  id: string,
  chunks: number,
  key: PrivateKey,
  onChunk: (index: number, chunk: Buffer) => void,
): Promise<ReadableStream<Uint8Array>> {
  const first = chunks > 0 ? await store.uploadChunk(id, 0) : null;
  if (first === null) throw new FileNotDecryptable('file_not_decryptable');
  const armored = first.subarray(0, 64).toString('latin1').trimStart().startsWith('-----BEGIN PGP MESSAGE');
  try {
    const source = chunkStream(store, id, chunks, onChunk);
    const message = armored
      ? await openpgp.readMessage({ armoredMessage: source.pipeThrough(new TextDecoderStream('latin1')) })
      : await openpgp.readMessage({ binaryMessage: source });
    const { data } = await openpgp.decrypt({
      message,
      decryptionKeys: key,
      format: 'binary',
      config: { allowUnauthenticatedStream: true },
    });
    return data as ReadableStream<Uint8Array>;
  } catch (err) {
    if (err instanceof FileNotDecryptable) throw err;
    throw new FileNotDecryptable('file_not_decryptable');
  }
}

/**
 * Splits a byte stream into lines, never holding more than one line (bounded by MAX_RECORD_BYTES)
 * beyond the chunk at hand. A chunk's lines are yielded together: one await per chunk, not per
 * line (a million lines made millions of promises for the collector).
 */
async function* splitLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<Line[]> {
  const decoder = new TextDecoder('utf-8');
  const reader = stream.getReader();
  let pending = '';
  let tooLong = false;
  let number = 0;
  const line = (text: string): Line => {
    number += 1;
    const clean = text.endsWith('\r') ? text.slice(0, -1) : text;
    const result = { number, text: tooLong ? null : clean };
    tooLong = false;
    return result;
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    let start = 0;
    const lines: Line[] = [];
    for (let nl = pending.indexOf('\n', start); nl !== -1; nl = pending.indexOf('\n', start)) {
      lines.push(line(pending.slice(start, nl)));
      start = nl + 1;
    }
    pending = pending.slice(start);
    if (lines.length > 0) yield lines;
    if (pending.length > MAX_RECORD_BYTES) {
      tooLong = true;
      pending = '';
    }
  }
  pending += decoder.decode();
  if (pending !== '' || tooLong) yield [line(pending)];
}

/**
 * How many lines splitLines yields for the stream, found without making them: the verify pass
 * only counts, and a million line strings it dropped at once were garbage that grew the heap.
 */
async function countLines(stream: ReadableStream<Uint8Array>): Promise<number> {
  const decoder = new TextDecoder('utf-8');
  const reader = stream.getReader();
  let lines = 0;
  let pending = 0;
  let tooLong = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = decoder.decode(value, { stream: true });
    let last = -1;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', nl + 1)) {
      lines += 1;
      last = nl;
    }
    if (last === -1) {
      pending += text.length;
    } else {
      pending = text.length - last - 1;
      tooLong = false;
    }
    if (pending > MAX_RECORD_BYTES) {
      tooLong = true;
      pending = 0;
    }
  }
  pending += decoder.decode().length;
  return pending > 0 || tooLong ? lines + 1 : lines;
}

/** Reads the whole message (its integrity check is at the end) and counts its lines; the chunks' hashes for `lines`. */
export async function verifyUpload(
  store: ImportStorePort,
  id: string,
  chunks: number,
  key: PrivateKey,
): Promise<{ hashes: string[]; lines: number }> {
  const hashes: string[] = [];
  const data = await decryptedStream(store, id, chunks, key, (index, chunk) => {
    hashes[index] = createHash('sha256').update(chunk).digest('hex');
    if (index % VERIFY_CHUNKS_PER_COLLECTION === VERIFY_CHUNKS_PER_COLLECTION - 1) collectGarbage();
  });
  let lines: number;
  try {
    lines = await countLines(data);
  } catch (err) {
    if (err instanceof FileNotDecryptable) throw err;
    throw new FileNotDecryptable('file_not_decryptable');
  }
  return { hashes, lines };
}

/** The verified file's lines, a decrypted chunk's at a time; throws FileNotDecryptable('file_changed') at the first chunk that differs. */
export async function* uploadLines(
  store: ImportStorePort,
  id: string,
  verified: { hashes: readonly string[] },
  key: PrivateKey,
): AsyncGenerator<Line[]> {
  let changed = false;
  const data = await decryptedStream(store, id, verified.hashes.length, key, (index, chunk) => {
    if (createHash('sha256').update(chunk).digest('hex') !== verified.hashes[index]) {
      changed = true;
      throw new FileNotDecryptable('file_changed');
    }
  });
  try {
    yield* splitLines(data);
  } catch (err) {
    // OpenPGP.js reports the source's error as its own: the flag says which it was.
    if (changed) throw new FileNotDecryptable('file_changed');
    if (err instanceof FileNotDecryptable) throw err;
    throw new FileNotDecryptable('file_not_decryptable');
  }
}
