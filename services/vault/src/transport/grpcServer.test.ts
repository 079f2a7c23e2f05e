import { Writable } from 'node:stream';
import pino from 'pino';
import type * as grpc from '@grpc/grpc-js';
import { LOG_REDACTION, TesseraError } from '@tessera/common';
import {
  errorFromGrpc,
  callUnary,
  checkHealth,
  createHealthClient,
  createVaultClient,
  type HealthClient,
  type RenderBatchItem,
  type RenderBatchResponse,
  type RenderRequest,
  type RenderResponse,
  type TokenizeBatchItem,
  type TokenizeBatchResponse,
  type TokenizeRequest,
  type TokenRecord__Output,
  type TokenRef,
  type VaultClient,
  type WireRenderRequest,
  type WireTokenizeRequest,
  type WireTokenRef,
  renderRequestToWire,
  tokenizeRequestToWire,
  tokenRefToWire,
} from '@tessera/protos';
import { createVaultHandlers } from './grpcHandlers';
import { startVaultServer, VAULT_SERVICE_NAME } from './server';
import { shutdownServer } from '@tessera/protos';
import { Redis } from 'ioredis';
import { useRedisServer } from '@tessera/test-support';
import type { RedisCardStore } from '../store/redisCardStore';
import { anEmptyRedisCardStore, aVault } from '../test/builders';

const PAN = '5555555555554444';
/** A card of merchant_a without CVV or holder name. */
const CARD_WITHOUT_CVV: TokenizeRequest = {
  merchantId: 'merchant_a',
  mode: 'test',
  number: PAN,
  holderName: '',
  expiryMonth: 1,
  expiryYear: 2033,
  cvv: '',
};
const logLines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});
const logger = pino({ level: 'debug', ...LOG_REDACTION }, sink);

let server: grpc.Server;
let client: VaultClient;
let health: HealthClient;
let store: RedisCardStore;

jest.setTimeout(20_000);

/** This file's private redis-server: the vault's card store. */
const db = useRedisServer((url) => new Redis(url));

beforeAll(async () => {
  store = await anEmptyRedisCardStore(db);
  const vault = aVault({ store });
  // Readiness as main.ts wires it: the store's.
  const running = await startVaultServer(
    '127.0.0.1:0',
    createVaultHandlers(vault, logger),
    undefined,
    async () => (await vault.ready()).ok,
  );
  server = running.server;
  client = createVaultClient(`127.0.0.1:${running.port}`);
  health = createHealthClient(`127.0.0.1:${running.port}`);
});

afterAll(async () => {
  client?.close();
  health?.close();
  if (server) await shutdownServer(server, 2000);
  await store?.close();
});

type Method<Req, Res> = (r: Req, m: grpc.Metadata, o: grpc.CallOptions, cb: grpc.requestCallback<Res>) => grpc.ClientUnaryCall;

function call<Req, Res>(method: Method<Req, Res>, request: Req, requestId: string): Promise<Res> {
  return callUnary(client, method, request, { timeoutMs: 5000, requestId }).catch((err: unknown) => {
    throw errorFromGrpc(err);
  });
}

/**
 * As the gateway and the proxy call (their requests through contract.ts's wire forms). Typed per
 * method: the generated client methods are overloaded, which defeats inference.
 */
const rpc = {
  tokenize: (req: TokenizeRequest, requestId = 'req-test') =>
    call<WireTokenizeRequest, TokenRecord__Output>(client.tokenize, tokenizeRequestToWire(req), requestId),
  getToken: (req: TokenRef, requestId = 'req-test') =>
    call<WireTokenRef, TokenRecord__Output>(client.getToken, tokenRefToWire(req), requestId),
  deleteToken: (req: TokenRef, requestId = 'req-test') => call<WireTokenRef, object>(client.deleteToken, tokenRefToWire(req), requestId),
  render: (req: RenderRequest, requestId = 'req-test') =>
    call<WireRenderRequest, RenderResponse>(client.render, renderRequestToWire(req), requestId),
  tokenizeBatch: (items: Array<{ requestId: string; request: TokenizeRequest }>) =>
    call<{ items: TokenizeBatchItem[] }, TokenizeBatchResponse>(
      client.tokenizeBatch,
      { items: items.map(({ requestId, request }) => ({ requestId, request: tokenizeRequestToWire(request) })) },
      'req-batch',
    ),
  renderBatch: (items: Array<{ requestId: string; request: RenderRequest }>) =>
    call<{ items: RenderBatchItem[] }, RenderBatchResponse>(
      client.renderBatch,
      { items: items.map(({ requestId, request }) => ({ requestId, request: renderRequestToWire(request) })) },
      'req-batch',
    ),
};

async function failure(promise: Promise<unknown>): Promise<TesseraError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof TesseraError)) throw new Error(`expected a TesseraError, got ${String(err)}`);
  return err;
}

describe('the vault gRPC server (Redis store)', () => {
  it('tokenizes, reads back, renders, deletes, and then no longer knows the token', async () => {
    const created = await rpc.tokenize({
      merchantId: 'merchant_a',
      mode: 'test',
      number: PAN,
      holderName: 'Grace Hopper',
      expiryMonth: 9,
      expiryYear: 2032,
      cvv: '321',
    });
    expect(created).toMatchObject({
      last4: '4444',
      brand: 'mastercard',
      expiryMonth: 9,
      expiryYear: 2032,
      cvvAvailable: true,
      holderNameAvailable: true,
    });
    expect(created.token).toMatch(/^tok\./);

    const read = await rpc.getToken({ merchantId: 'merchant_a', mode: 'test', token: created.token });
    expect(read).toEqual(created);

    const rendered = await rpc.render({
      merchantId: 'merchant_a',
      mode: 'test',
      token: created.token,
      template: 'card[number]=[CARD_NUMBER]&card[exp]=[CARD_EXPIRY_MONTH]%2F[CARD_EXPIRY_YEAR]&card[cvc]=[CARD_CVV]&name=[CARD_HOLDER]',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(Buffer.from(rendered.body as Buffer).toString('utf8')).toBe(
      `card[number]=${PAN}&card[exp]=09%2F2032&card[cvc]=321&name=Grace+Hopper`,
    );

    await rpc.deleteToken({ merchantId: 'merchant_a', mode: 'test', token: created.token });
    const gone = await failure(rpc.getToken({ merchantId: 'merchant_a', mode: 'test', token: created.token }));
    expect(gone).toMatchObject({ code: 'token_not_found', status: 404 });
  });

  it('answers 404 token_not_found to another merchant', async () => {
    const { token } = await rpc.tokenize(CARD_WITHOUT_CVV);
    // Sent together; each refusal is caught as it arrives (none is left unhandled while another is awaited).
    for (const refusal of await Promise.all(
      [
        rpc.getToken({ merchantId: 'merchant_b', mode: 'test', token }),
        rpc.render({ merchantId: 'merchant_b', mode: 'test', token, template: '[CARD_NUMBER]', contentType: 'text/plain' }),
        rpc.deleteToken({ merchantId: 'merchant_b', mode: 'test', token }),
      ].map(failure),
    )) {
      expect(refusal).toMatchObject({ code: 'token_not_found', status: 404 });
    }
    expect((await rpc.getToken({ merchantId: 'merchant_a', mode: 'test', token })).token).toBe(token);
  });

  it('answers 404 token_not_found to the other mode and to a caller that sends no mode, in batches too', async () => {
    const { token } = await rpc.tokenize(CARD_WITHOUT_CVV);
    for (const mode of ['live', '']) {
      for (const refusal of await Promise.all(
        [
          rpc.getToken({ merchantId: 'merchant_a', mode, token }),
          rpc.render({ merchantId: 'merchant_a', mode, token, template: '[CARD_NUMBER]', contentType: 'text/plain' }),
          rpc.deleteToken({ merchantId: 'merchant_a', mode, token }),
        ].map(failure),
      )) {
        expect(refusal).toMatchObject({ code: 'token_not_found', status: 404 });
      }
      const { results } = await rpc.renderBatch([
        { requestId: 'req-m1', request: { merchantId: 'merchant_a', mode, token, template: '[CARD_NUMBER]', contentType: 'text/plain' } },
      ]);
      expect(results[0]!.refusal).toMatchObject({ code: 'token_not_found' });
    }
    expect((await rpc.getToken({ merchantId: 'merchant_a', mode: 'test', token })).token).toBe(token);
  });

  it('refuses to tokenize for a caller that sends no mode, alone or in a batch', async () => {
    expect(await failure(rpc.tokenize({ ...CARD_WITHOUT_CVV, mode: '' }))).toMatchObject({ code: 'parameter_invalid', param: 'mode' });
    const { results } = await rpc.tokenizeBatch([{ requestId: 'req-nomode', request: { ...CARD_WITHOUT_CVV, mode: '' } }]);
    expect(results[0]!.refusal).toMatchObject({ code: 'parameter_invalid', param: 'mode' });
  });

  it('serves a caller of the previous release: the key mode as a string, an empty holder name and CVV sent as ""', async () => {
    const previousRelease = { ...CARD_WITHOUT_CVV, holderName: '', cvv: '' };
    const record = await call<TokenizeRequest, TokenRecord__Output>(client.tokenize, previousRelease, 'req-old');
    expect(record).toMatchObject({ holderNameAvailable: false, cvvAvailable: false });
    const ref = { merchantId: 'merchant_a', mode: 'test', token: record.token };
    expect(await call<TokenRef, TokenRecord__Output>(client.getToken, ref, 'req-old')).toMatchObject({ token: record.token });
    // The enum wins over the string when both are set: a live key finds no test token.
    expect(
      await failure(call<WireTokenRef, TokenRecord__Output>(client.getToken, { ...ref, keyMode: 'MODE_LIVE' }, 'req-mixed')),
    ).toMatchObject({ code: 'token_not_found' });
  });

  it('carries validation errors with their code and param', async () => {
    const err = await failure(
      rpc.tokenize({
        merchantId: 'merchant_a',
        mode: 'test',
        number: '4242424242424241',
        holderName: '',
        expiryMonth: 1,
        expiryYear: 2033,
        cvv: '',
      }),
    );
    expect(err).toMatchObject({ code: 'card_number_invalid', param: 'number', status: 400 });
  });

  it('tokenizes a batch item by item: refusals carry their code and param, logged under the item’s request id', async () => {
    logLines.length = 0;
    const { results } = await rpc.tokenizeBatch([
      { requestId: 'req-item-1', request: CARD_WITHOUT_CVV },
      { requestId: 'req-item-2', request: { ...CARD_WITHOUT_CVV, number: '5555555555554445' } },
    ]);
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ outcome: 'record', record: { last4: '4444' } });
    expect(await rpc.getToken({ merchantId: 'merchant_a', mode: 'test', token: results[0]!.record!.token })).toMatchObject({
      last4: '4444',
    });
    expect(results[1]?.outcome).toBe('refusal');
    expect(results[1]!.refusal).toMatchObject({ code: 'card_number_invalid', param: 'number' });
    // Until the next release, also in the form the previous release's callers read (rolling upgrades).
    expect(JSON.parse(results[1]!.errorJson)).toMatchObject({ code: 'card_number_invalid', param: 'number' });
    const refusal = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.msg === 'rpc refused');
    expect(refusal).toMatchObject({ rpc: 'Tokenize', requestId: 'req-item-2', code: 'card_number_invalid' });
    expect(logLines.join('\n')).not.toContain('555555555555');
  });

  it('renders a batch item by item: one body per token, refusals with their code', async () => {
    const { token } = await rpc.tokenize(CARD_WITHOUT_CVV);
    const render = (merchantId: string, template: string) => ({ merchantId, mode: 'test', token, template, contentType: 'text/plain' });
    const { results } = await rpc.renderBatch([
      { requestId: 'req-r1', request: render('merchant_a', 'n=[CARD_NUMBER]') },
      { requestId: 'req-r2', request: render('merchant_b', 'n=[CARD_NUMBER]') },
      { requestId: 'req-r3', request: render('merchant_a', 'c=[CARD_CVV]') },
    ]);
    expect(results.map((r) => r.outcome)).toEqual(['body', 'refusal', 'refusal']);
    expect(Buffer.from(results[0]!.body!).toString('utf8')).toBe(`n=${PAN}`);
    expect(results[1]!.refusal).toMatchObject({ code: 'token_not_found' });
    expect(results[2]!.refusal).toMatchObject({ code: 'cvv_unavailable' });
  });

  it("fails an item that would render too large on its own: the batch's other items get their bodies and CVVs", async () => {
    const wide = await rpc.tokenize({ ...CARD_WITHOUT_CVV, holderName: '\uffff'.repeat(200), cvv: '321' });
    const others = await Promise.all([1, 2, 3].map(() => rpc.tokenize({ ...CARD_WITHOUT_CVV, cvv: '046' })));
    const form = 'application/x-www-form-urlencoded';
    const { results } = await rpc.renderBatch([
      ...others.slice(0, 2).map(({ token }, i) => ({
        requestId: `req-o${i}`,
        request: { merchantId: 'merchant_a', mode: 'test', token, template: 'cvc=[CARD_CVV]', contentType: form },
      })),
      {
        requestId: 'req-huge',
        request: {
          merchantId: 'merchant_a',
          mode: 'test',
          token: wide.token,
          template: `cvc=[CARD_CVV]&name=${'[CARD_HOLDER]'.repeat(75_000)}`,
          contentType: form,
        },
      },
      {
        requestId: 'req-o2',
        request: { merchantId: 'merchant_a', mode: 'test', token: others[2]!.token, template: 'cvc=[CARD_CVV]', contentType: form },
      },
    ]);
    expect(results.map((r) => r.outcome)).toEqual(['body', 'body', 'refusal', 'body']);
    expect(results[2]!.refusal).toMatchObject({ code: 'rendered_body_too_large', param: 'pspBody' });
    for (const i of [0, 1, 3]) expect(Buffer.from(results[i]!.body!).toString('utf8')).toBe('cvc=046');
    expect((await rpc.getToken({ merchantId: 'merchant_a', mode: 'test', token: wide.token })).cvvAvailable).toBe(true);
  });

  it('carries 422 errors for placeholders whose data is missing', async () => {
    const { token } = await rpc.tokenize(CARD_WITHOUT_CVV);
    const err = await failure(
      rpc.render({ merchantId: 'merchant_a', mode: 'test', token, template: '{"c":"[CARD_CVV]"}', contentType: 'application/json' }),
    );
    expect(err).toMatchObject({ code: 'cvv_unavailable', status: 422 });
  });

  it('reports readiness from the store through grpc.health.v1', async () => {
    expect(await checkHealth(health, VAULT_SERVICE_NAME, 5000)).toBe('SERVING');
  });

  it('logs the request id on every line and never the card number, CVV, holder name or rendered body', async () => {
    logLines.length = 0;
    const { token } = await rpc.tokenize(
      { merchantId: 'merchant_a', mode: 'test', number: PAN, holderName: 'Alan Turing', expiryMonth: 2, expiryYear: 2034, cvv: '987' },
      'req-log-1',
    );
    await rpc.render(
      {
        merchantId: 'merchant_a',
        mode: 'test',
        token,
        template: '[CARD_NUMBER] [CARD_CVV] [CARD_HOLDER]',
        contentType: 'application/json',
      },
      'req-log-2',
    );
    await failure(rpc.getToken({ merchantId: 'merchant_b', mode: 'test', token }, 'req-log-3'));
    expect(logLines.length).toBeGreaterThanOrEqual(3);
    for (const line of logLines) {
      expect(JSON.parse(line).requestId).toMatch(/^req-log-\d$/);
      expect(line).not.toContain('555555555555');
      // As a number of its own: a log line's millisecond time may hold these digits.
      expect(line).not.toMatch(/(?<!\d)987(?!\d)/);
      expect(line).not.toContain('Alan Turing');
    }
  });
});
