import * as grpc from '@grpc/grpc-js';
import { TesseraError } from '@tessera/common';
import { errorFromGrpc } from './grpcErrors';
import { createBatcher } from './batching';
import { call, callOnceConnected, createVaultClient, toGrpcError, vaultService, type VaultHandlers } from './index';
import { answerUnary } from './serve';

describe('client calls', () => {
  it('reject with a TesseraError: a peer nobody listens on is 503, and a call never started says nothing was sent', async () => {
    const client = createVaultClient('127.0.0.1:1');
    try {
      const ref = { merchantId: 'm', mode: 'test', token: 't' };
      const err = await call(client, client.GetToken, ref, { timeoutMs: 2000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TesseraError);
      expect(err).toMatchObject({ code: 'service_unavailable', status: 503 });
      const once = await callOnceConnected(client, client.GetToken, ref, { timeoutMs: 2000, peer: 'vault' }).catch((e: unknown) => e);
      expect(once).toMatchObject({ code: 'service_unavailable', message: 'The vault is not reachable; nothing was sent.' });
    } finally {
      client.close();
    }
  });

  it('a batch call refused as UNIMPLEMENTED (already mapped) sends its items one by one', async () => {
    const sent: string[] = [];
    const unimplemented = Object.assign(new Error('x'), { code: grpc.status.UNIMPLEMENTED, details: '', metadata: new grpc.Metadata() });
    const batched = createBatcher<string, string>({
      maxBatch: 8,
      sendOne: async (item) => {
        sent.push(item);
        return item;
      },
      sendBatch: () => Promise.reject(errorFromGrpc(unimplemented)),
    });
    expect(await Promise.all(['a', 'b'].map(batched))).toEqual(['a', 'b']);
    expect(sent).toEqual(['a', 'b']);
  });
});

describe('answerUnary', () => {
  it('answers once: a refusal carries the TesseraError, and a budget refuses before a late reply', async () => {
    const answers: Array<{ err: Partial<grpc.ServiceError> | null; reply?: string }> = [];
    const callback = (err: Partial<grpc.ServiceError> | null, reply?: string | null): void => {
      answers.push({ err, ...(typeof reply === 'string' ? { reply } : {}) });
    };
    answerUnary(callback, Promise.reject(new TesseraError('token_not_found')));
    let late: (value: string) => void = () => undefined;
    const failed: unknown[] = [];
    answerUnary(callback, new Promise<string>((resolve) => (late = resolve)), {
      budget: { ms: 10, error: () => new TesseraError('service_unavailable') },
      failed: (err) => failed.push(err),
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    late('too late');
    await new Promise((resolve) => setImmediate(resolve));
    expect(answers).toHaveLength(2);
    expect(errorFromGrpc(answers[0]?.err)).toMatchObject({ code: 'token_not_found' });
    expect(answers[0]?.err?.code).toBe(grpc.status.NOT_FOUND);
    expect(errorFromGrpc(answers[1]?.err)).toMatchObject({ code: 'service_unavailable' });
    expect(failed).toHaveLength(1);
  });
});

describe('unary answers', () => {
  it('are taken when their message arrives, without waiting for the status trailers; a refusal still rejects', async () => {
    const held: Array<() => void> = [];
    // The server holds every OK status back, as a busy event loop would; refusals go out at once.
    const holdOkStatus: grpc.ServerInterceptor = (_method, serverCall) =>
      new grpc.ServerInterceptingCall(serverCall, {
        sendStatus(status, next) {
          if (status.code === grpc.status.OK) held.push(() => next(status));
          else next(status);
        },
      });
    const server = new grpc.Server({ interceptors: [holdOkStatus] });
    const handlers: Partial<VaultHandlers> = {
      DeleteToken: (_call, callback) => callback(null, {}),
      GetToken: (_call, callback) => callback(toGrpcError(new TesseraError('token_not_found'))),
    };
    server.addService(vaultService, handlers as VaultHandlers);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    const client = createVaultClient(`127.0.0.1:${port}`);
    try {
      const answer = await Promise.race([
        call(client, client.DeleteToken, { merchantId: 'm', mode: 'test', token: 't' }, { timeoutMs: 5000 }),
        new Promise((resolve) => setTimeout(() => resolve('still waiting for the trailers'), 1500)),
      ]);
      expect(answer).toEqual({});
      const refused = await call(client, client.GetToken, { merchantId: 'm', mode: 'test', token: 't' }, { timeoutMs: 5000 }).catch(
        (e: unknown) => e,
      );
      expect(refused).toMatchObject({ code: 'token_not_found' });
    } finally {
      held.forEach((release) => release());
      client.close();
      server.forceShutdown();
    }
  });
});
