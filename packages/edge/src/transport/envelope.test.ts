import express, { type Request, type Response } from 'express';
import { TesseraError } from '@tessera/common';
import { startApp, type RunningApp, type TestResponse } from '../testing/http';
import { sendError, sendJson, setServiceHeaders } from './envelope';

/** rawHeaders without Date, which differs between two responses. */
const headerLines = (res: TestResponse) => res.rawHeaders.join('\n').replace(/^Date\n.*$/m, '');

describe('sendJson and sendError', () => {
  let app: RunningApp;
  const body = { token: 'tok.x', text: 'ünïcode 😀', long: 'x'.repeat(1200), nested: { a: [1, null, true] } };
  beforeAll(async () => {
    const e = express();
    e.disable('x-powered-by');
    e.disable('etag');
    e.all('/ours/:status', (req: Request, res: Response) => sendJson(res, Number(req.params.status), body));
    // What the gateway answered before it wrote JSON itself: Express's res.json.
    e.all('/express/:status', (req: Request, res: Response) => {
      setServiceHeaders(res);
      res.status(Number(req.params.status)).json(body);
    });
    e.all('/error/ours', (_req: Request, res: Response) => sendError(res, new TesseraError('token_not_found'), 'rid'));
    e.all('/error/express', (_req: Request, res: Response) => {
      const err = new TesseraError('token_not_found');
      setServiceHeaders(res);
      res.setHeader('x-tessera-error', err.code);
      res.status(err.status).json({ error: { ...err.toJSON(), requestId: 'rid' } });
    });
    e.all('/error/card', (_req: Request, res: Response) =>
      sendError(
        res,
        new TesseraError('parameter_unknown', { param: '4242_4242_4242_4242', message: 'Unknown parameter "3782-822463-10005".' }),
        'rid',
      ),
    );
    e.all('/error/unavailable', (_req: Request, res: Response) => sendError(res, new TesseraError('service_unavailable'), 'rid'));
    e.all('/error/limited', (_req: Request, res: Response) =>
      sendError(res, new TesseraError('rate_limited', { retryAfterSeconds: 42 }), 'rid'),
    );
    e.all('/error/unavailable-for-long', (_req: Request, res: Response) =>
      sendError(res, new TesseraError('service_unavailable', { retryAfterSeconds: 30 }), 'rid'),
    );
    app = await startApp(e);
  });
  afterAll(() => app.close());

  it.each([
    ['POST', '201'],
    ['POST', '200'],
    ['DELETE', '200'],
    ['GET', '200'],
    ['HEAD', '200'],
    ['POST', '204'],
    ['POST', '400'],
  ])('answer %s with %s byte for byte as res.json did', async (method, status) => {
    const ours = await app.request(method, `/ours/${status}`);
    const theirs = await app.request(method, `/express/${status}`);
    expect([ours.status, headerLines(ours), ours.body.toString('utf8')]).toEqual([
      theirs.status,
      headerLines(theirs),
      theirs.body.toString('utf8'),
    ]);
  });

  it('writes the error envelope byte for byte as res.json did', async () => {
    const ours = await app.request('POST', '/error/ours');
    const theirs = await app.request('POST', '/error/express');
    expect(ours.status).toBe(404);
    expect([headerLines(ours), ours.body.toString('utf8')]).toEqual([headerLines(theirs), theirs.body.toString('utf8')]);
  });

  it('tells a client when to retry a 503 (nothing was done), and only a 503', async () => {
    const unavailable = await app.request('POST', '/error/unavailable');
    expect([unavailable.status, unavailable.headers['retry-after']]).toEqual([503, '1']);
    expect((await app.request('POST', '/error/ours')).headers['retry-after']).toBeUndefined();
  });

  it('sends the wait an error carries as Retry-After, in place of the 503 default', async () => {
    const limited = await app.request('POST', '/error/limited');
    expect([limited.status, limited.headers['retry-after']]).toEqual([429, '42']);
    expect(JSON.parse(limited.body.toString('utf8')).error).not.toHaveProperty('retryAfterSeconds');
    const unavailable = await app.request('POST', '/error/unavailable-for-long');
    expect([unavailable.status, unavailable.headers['retry-after']]).toEqual([503, '30']);
  });

  it('masks a card number in an error message or param, whoever wrote it', async () => {
    const res = await app.request('POST', '/error/card');
    expect(JSON.parse(res.body.toString('utf8'))).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'parameter_unknown',
        message: 'Unknown parameter "[redacted]".',
        param: '[redacted]',
        requestId: 'rid',
      },
    });
  });
});
