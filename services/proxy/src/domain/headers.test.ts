import { TesseraError } from '@tessera/common';
import { filterRequestHeaders, filterResponseHeaders, findContentType, pairRawHeaders } from './headers';
import { parsePspMethod } from './method';

const h = (name: string, value: string) => ({ name, value });

describe('filterRequestHeaders', () => {
  it('drops hop-by-hop headers, host, content-length and expect, keeping the rest in order', () => {
    const out = filterRequestHeaders([
      h('Authorization', 'Bearer x'),
      h('Connection', 'keep-alive, X-Drop-Me'),
      h('Keep-Alive', 'timeout=5'),
      h('Proxy-Authorization', 'Basic y'),
      h('TE', 'trailers'),
      h('Trailer', 'X'),
      h('Transfer-Encoding', 'chunked'),
      h('Upgrade', 'h2c'),
      h('Host', 'evil.example'),
      h('Content-Length', '999'),
      h('Expect', '100-continue'),
      h('X-Drop-Me', '1'),
      h('Content-Type', 'application/json'),
      h('X-Idempotency-Key', 'abc'),
    ]);
    expect(out).toEqual([h('Authorization', 'Bearer x'), h('Content-Type', 'application/json'), h('X-Idempotency-Key', 'abc')]);
  });

  it('refuses a header name that is not an HTTP token, without echoing it', () => {
    try {
      filterRequestHeaders([h('Bad Name', 'v')]);
      throw new Error('expected a refusal');
    } catch (err) {
      expect(err).toBeInstanceOf(TesseraError);
      expect((err as TesseraError).code).toBe('parameter_invalid');
      expect((err as TesseraError).param).toBe('pspHeaders');
      expect((err as TesseraError).message).not.toContain('Bad Name');
    }
  });

  it('refuses a header value containing CR or LF (header injection)', () => {
    expect(() => filterRequestHeaders([h('X-A', 'ok\r\nX-Injected: 1')])).toThrow(TesseraError);
  });
});

describe('filterResponseHeaders', () => {
  it('keeps repeated headers such as set-cookie as separate entries in PSP order', () => {
    const out = filterResponseHeaders(
      pairRawHeaders([
        'Set-Cookie',
        'a=1',
        'Content-Type',
        'text/plain',
        'Set-Cookie',
        'b=2',
        'Content-Length',
        '5',
        'Connection',
        'keep-alive',
        'Keep-Alive',
        'timeout=5',
        'Transfer-Encoding',
        'chunked',
      ]),
    );
    expect(out).toEqual([h('Set-Cookie', 'a=1'), h('Content-Type', 'text/plain'), h('Set-Cookie', 'b=2')]);
  });
});

describe('pairRawHeaders', () => {
  it('decodes undici buffers as undici does: names as UTF-8, values as latin1', () => {
    expect(pairRawHeaders([Buffer.from('X-Psp'), Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'X-Text', 'plain'])).toEqual([
      h('X-Psp', 'caf\u00e9'),
      h('X-Text', 'plain'),
    ]);
  });
});

describe('findContentType', () => {
  it('finds the content type whatever the case of its name', () => {
    expect(findContentType([h('X', '1'), h('CONTENT-type', 'application/x-www-form-urlencoded')])).toBe(
      'application/x-www-form-urlencoded',
    );
    expect(findContentType([])).toBe('');
  });

  it.each([[['content-type', 'Content-Type']], [['Content-Type', 'CONTENT-TYPE']], [['content-type', 'content-type']]])(
    'refuses two Content-Type headers (%j) with parameter_invalid on pspHeaders: the vault would encode for one of them only',
    (names) => {
      const headers = [h(names[0]!, 'text/plain'), h('X', '1'), h(names[1]!, 'application/json')];
      expect(() => findContentType(headers)).toThrow(
        expect.objectContaining({ code: 'parameter_invalid', status: 400, param: 'pspHeaders' }),
      );
    },
  );
});

describe('parsePspMethod', () => {
  it('accepts the five product methods in any case', () => {
    expect(parsePspMethod('POST')).toBe('POST');
    expect(parsePspMethod('patch')).toBe('PATCH');
  });

  it.each(['HEAD', 'OPTIONS', 'CONNECT', 'TRACE', ''])('refuses %j', (m) => {
    expect(() => parsePspMethod(m)).toThrow(TesseraError);
  });
});
