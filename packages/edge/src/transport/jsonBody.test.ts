import net from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { TesseraError } from '@tessera/common';
import { startApp, type RunningApp } from '../testing/http';
import { errorFromBodyParser, jsonObjectBody } from './jsonBody';

const LIMIT = 64;

describe('jsonObjectBody', () => {
  let app: RunningApp;
  const failures: string[] = [];
  beforeAll(async () => {
    const e = express();
    e.post('/echo', ...jsonObjectBody(LIMIT), (req: Request, res: Response) => {
      res.json({ body: req.body as unknown });
    });
    e.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const error = err instanceof TesseraError ? err : (errorFromBodyParser(err) ?? new TesseraError('internal_error'));
      failures.push(error.code);
      res.status(error.status).json({ code: error.code, message: error.message });
    });
    app = await startApp(e);
  });
  afterAll(() => app.close());

  // With a Content-Length the body is read by the gateway's own reader; without one the client
  // sends it chunked, which goes through body-parser. Both must answer alike.
  const send = async (body: Buffer, contentType: string, framing: 'length' | 'chunked') => {
    const headers: Record<string, string> = { 'content-type': contentType };
    if (framing === 'length') headers['content-length'] = String(body.length);
    const res = await app.request('POST', '/echo', { headers, body });
    return { status: res.status, body: res.body.toString('utf8') };
  };

  it.each<[string, Buffer]>([
    ['an object', Buffer.from('{"a":1,"b":[true,null]}')],
    ['an object after a byte-order mark', Buffer.from('\uFEFF{"a":1}')],
    ['multi-byte characters', Buffer.from('{"name":"Zoë 😀 ü"}')],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x22, 0x7d])],
    ['surrounding whitespace', Buffer.from(' \n{"a":1}\t ')],
    ['an array', Buffer.from('[1,2]')],
    ['null', Buffer.from('null')],
    ['a number', Buffer.from('42')],
    ['a string', Buffer.from('"x"')],
    ['broken JSON', Buffer.from('{"a":')],
    ['a bare word', Buffer.from('nul')],
    ['exactly the limit', Buffer.from(`{"a":"${'x'.repeat(LIMIT - 8)}"}`)],
    ['one byte over the limit', Buffer.from(`{"a":"${'x'.repeat(LIMIT - 7)}"}`)],
  ])('answers %s the same with a Content-Length as body-parser does for a chunked body', async (_name, body) => {
    for (const contentType of ['application/json', 'application/json; charset=utf-8']) {
      const direct = await send(body, contentType, 'length');
      const parsed = await send(body, contentType, 'chunked');
      expect(direct).toEqual(parsed);
    }
  });

  it('parses a plain JSON object', async () => {
    expect(await send(Buffer.from('{"a":"ü"}'), 'application/json', 'length')).toEqual({ status: 200, body: '{"body":{"a":"ü"}}' });
  });

  it('reports a body cut off by the client as incomplete', async () => {
    failures.length = 0;
    const socket = net.connect(app.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('POST /echo HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n{"a":');
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    for (let i = 0; i < 50 && failures.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(failures).toEqual(['invalid_request']);
  });
});
