import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { TesseraError } from '@tessera/common';
import {
  refusalOf,
  toGrpcError,
  clientChannelOptions,
  createProxyClient,
  createVaultClient,
  GRPC_DEFAULTS,
  healthService,
  type HealthCheckHandlers,
  proxyService,
  requestIdFromMetadata,
  SERVER_OPTIONS,
  vaultService,
  type ForwardCall,
  type ProxyHandlers,
  type VaultHandlers,
} from '@tessera/protos';
import { freePort } from '@tessera/test-support';
import { MAX_TOKENIZE_BATCH } from '@tessera/protos';
import { proxyApiFromClient, vaultApiFromClient } from './upstreams';

const record = {
  token: 'tok.x',
  last4: '4242',
  brand: 'visa',
  expiryMonth: 12,
  expiryYear: 2035,
  createdAt: '2030-01-01T00:00:00Z',
  expiresAt: '2036-01-01T00:00:00Z',
  cvvAvailable: false,
  holderNameAvailable: false,
};

/** A peer that can be frozen: while `hung`, nothing it is sent is answered, as after SIGSTOP; its connection stays open. */
interface Freezable {
  hung: boolean;
}

/** grpc.health.v1 Check of a Freezable peer: SERVING, or no answer at all while it is hung. */
function healthOf(peer: Freezable): HealthCheckHandlers {
  return {
    Check: (_call, callback) => {
      if (!peer.hung) callback(null, { status: 'SERVING' });
    },
    Watch: () => {},
  };
}

/** Liveness probing every 100 ms with a 200 ms timeout: a hung peer is noticed within 300 ms. */
const QUICK_LIVENESS = clientChannelOptions({ ...GRPC_DEFAULTS, livenessIntervalMs: 100, livenessTimeoutMs: 200 });

async function waitForChannelState(client: grpc.Client, state: grpc.connectivityState): Promise<void> {
  const deadline = Date.now() + 5000;
  while (client.getChannel().getConnectivityState(false) !== state) {
    if (Date.now() > deadline) throw new Error(`the channel never reached ${grpc.connectivityState[state]}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A real gRPC server speaking the vault contract, so the client adapter is tested over the wire. */
async function startVault(
  handlers: Partial<VaultHandlers>,
  health?: HealthCheckHandlers,
): Promise<{ address: string; stop: () => Promise<void> }> {
  const server = new grpc.Server(SERVER_OPTIONS);
  if (health) server.addService(healthService, health);
  const unimplemented = (_call: unknown, callback: grpc.sendUnaryData<never>) => callback({ code: grpc.status.UNIMPLEMENTED });
  server.addService(vaultService, {
    Tokenize: unimplemented,
    TokenizeBatch: unimplemented,
    GetToken: unimplemented,
    DeleteToken: unimplemented,
    RetainToken: unimplemented,
    Render: unimplemented,
    ...handlers,
  } as VaultHandlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, stop: () => new Promise((resolve) => server.tryShutdown(() => resolve())) };
}

describe('vault client adapter', () => {
  it('retains a token with RetainToken for the key’s merchant and mode, and maps its refusal', async () => {
    const seen: unknown[] = [];
    const vault = await startVault({
      RetainToken: (call, callback) => {
        seen.push(call.request);
        if (call.request.token === 'tok.gone') callback(toGrpcError(new TesseraError('token_not_found')));
        else callback(null, { ...record, token: call.request.token, provisional: false });
      },
    });
    const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
    try {
      await expect(api.retainToken({ merchantId: 'm', mode: 'live', token: 'tok.abc' }, { requestId: 'r' })).resolves.toMatchObject({
        token: 'tok.abc',
        provisional: false,
      });
      await expect(api.retainToken({ merchantId: 'm', mode: 'live', token: 'tok.gone' }, { requestId: 'r' })).rejects.toMatchObject({
        code: 'token_not_found',
        status: 404,
      });
      // The key mode as the enum, and for one release also as the previous release's string.
      expect(seen[0]).toEqual({ merchantId: 'm', mode: 'live', keyMode: 'MODE_LIVE', token: 'tok.abc' });
    } finally {
      api.close();
      await vault.stop();
    }
  });

  it('sends the request id in metadata and the key mode in the request, and returns the vault’s answer', async () => {
    let seenRequestId: string | undefined;
    let seenMode: string | undefined;
    const vault = await startVault({
      GetToken: (call, callback) => {
        seenRequestId = requestIdFromMetadata(call.metadata);
        seenMode = call.request.mode;
        callback(null, { ...record, token: call.request.token });
      },
    });
    const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
    try {
      await expect(api.getToken({ merchantId: 'm', mode: 'live', token: 'tok.abc' }, { requestId: 'req_123' })).resolves.toMatchObject({
        token: 'tok.abc',
        last4: '4242',
      });
      expect(seenRequestId).toBe('req_123');
      expect(seenMode).toBe('live');
    } finally {
      api.close();
      await vault.stop();
    }
  });

  it('tokenizes with the key mode as the enum, leaving out a holder name and CVV not given', async () => {
    const seen: unknown[] = [];
    const vault = await startVault({
      Tokenize: (call, callback) => {
        seen.push(call.request);
        callback(null, record);
      },
    });
    const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
    try {
      const card = { merchantId: 'm', number: '4242424242424242', expiryMonth: 12, expiryYear: 2035, mode: 'live' };
      await api.tokenize({ ...card, holderName: '', cvv: '' }, { requestId: 'r1' });
      await api.tokenize({ ...card, holderName: 'Ada', cvv: '123' }, { requestId: 'r2' });
      expect(seen[0]).toMatchObject({ keyMode: 'MODE_LIVE', mode: 'live' });
      expect(seen[0]).not.toHaveProperty('holderName');
      expect(seen[0]).not.toHaveProperty('cvv');
      expect(seen[1]).toMatchObject({ keyMode: 'MODE_LIVE', holderName: 'Ada', cvv: '123' });
    } finally {
      api.close();
      await vault.stop();
    }
  });

  it('rebuilds the TesseraError the vault raised', async () => {
    const vault = await startVault({ GetToken: (_call, callback) => callback(toGrpcError(new TesseraError('token_not_found'))) });
    const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
    try {
      await expect(api.getToken({ merchantId: 'm', mode: 'test', token: 't' }, { requestId: 'r' })).rejects.toMatchObject({
        code: 'token_not_found',
        status: 404,
      });
    } finally {
      api.close();
      await vault.stop();
    }
  });

  it('reads the refusals of a vault of the previous release (JSON in tessera-error-bin and error_json) during a rolling upgrade', async () => {
    const legacyJson = (err: TesseraError): string => JSON.stringify(err.toJSON());
    const vault = await startVault({
      GetToken: (_call, callback) => {
        const metadata = new grpc.Metadata();
        metadata.set('tessera-error-bin', Buffer.from(legacyJson(new TesseraError('token_not_found'))));
        callback({ code: grpc.status.NOT_FOUND, details: 'token_not_found', metadata });
      },
      TokenizeBatch: (call, callback) => {
        callback(null, {
          results: call.request.items.map(() => ({ errorJson: legacyJson(new TesseraError('card_number_invalid', { param: 'number' })) })),
        });
      },
    });
    const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
    try {
      await expect(api.getToken({ merchantId: 'm', mode: 'test', token: 't' }, { requestId: 'r' })).rejects.toMatchObject({
        code: 'token_not_found',
        status: 404,
      });
      const card = {
        merchantId: 'm',
        number: '4000000000000002',
        holderName: '',
        expiryMonth: 12,
        expiryYear: 2035,
        cvv: '',
        mode: 'test',
      };
      const batch = await Promise.allSettled([api.tokenize(card, { requestId: 'r1' }), api.tokenize(card, { requestId: 'r2' })]);
      expect(batch.map((answer) => answer.status === 'rejected' && answer.reason)).toEqual([
        expect.objectContaining({ code: 'card_number_invalid', param: 'number', status: 400 }),
        expect.objectContaining({ code: 'card_number_invalid', param: 'number', status: 400 }),
      ]);
    } finally {
      api.close();
      await vault.stop();
    }
  });

  it('turns a vault that does not answer within the deadline into 503 service_unavailable, which no Idempotency-Key keeps', async () => {
    const vault = await startVault({ GetToken: () => {} });
    const api = vaultApiFromClient(createVaultClient(vault.address), 200);
    try {
      await expect(api.getToken({ merchantId: 'm', mode: 'test', token: 't' }, { requestId: 'r' })).rejects.toMatchObject({
        code: 'service_unavailable',
        status: 503,
      });
    } finally {
      api.close();
      await vault.stop();
    }
  });

  it('stops sending work to a vault that stops answering (hung): refused at once with 503, and served again once it answers', async () => {
    const vault: Freezable = { hung: false };
    let received = 0;
    const server = await startVault(
      {
        GetToken: (_call, callback) => {
          received++;
          if (!vault.hung) callback(null, record);
        },
      },
      healthOf(vault),
    );
    const client = createVaultClient(server.address, undefined, QUICK_LIVENESS);
    const api = vaultApiFromClient(client, 5000);
    const ref = { merchantId: 'm', mode: 'test', token: 'tok.x' };
    try {
      await expect(api.getToken(ref, { requestId: 'r' })).resolves.toMatchObject({ token: 'tok.x' });
      vault.hung = true;
      await waitForChannelState(client, grpc.connectivityState.TRANSIENT_FAILURE);
      // Refused without waiting for the 5 s deadline, and without being sent.
      await expect(api.getToken(ref, { requestId: 'r' })).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
      await expect(api.ready({ requestId: 'r', timeoutMs: 5000 })).rejects.toMatchObject({ code: 'service_unavailable' });
      expect(received).toBe(1);
      vault.hung = false;
      await waitForChannelState(client, grpc.connectivityState.READY);
      await expect(api.getToken(ref, { requestId: 'r' })).resolves.toMatchObject({ token: 'tok.x' });
      expect(received).toBe(2);
    } finally {
      api.close();
      await server.stop();
    }
  });

  it('turns a vault that is not running into 503 service_unavailable', async () => {
    const api = vaultApiFromClient(createVaultClient(`127.0.0.1:${await freePort()}`), 2000);
    try {
      await expect(api.getToken({ merchantId: 'm', mode: 'test', token: 't' }, { requestId: 'r' })).rejects.toMatchObject({
        code: 'service_unavailable',
        status: 503,
      });
    } finally {
      api.close();
    }
  });

  it('turns a vault that accepts TCP but never speaks HTTP/2 into 503 service_unavailable within the deadline', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket.on('error', () => undefined)));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const api = vaultApiFromClient(createVaultClient(`127.0.0.1:${(silent.address() as net.AddressInfo).port}`), 300);
    const started = Date.now();
    try {
      await expect(api.getToken({ merchantId: 'm', mode: 'test', token: 't' }, { requestId: 'r' })).rejects.toMatchObject({
        code: 'service_unavailable',
        status: 503,
      });
      expect(Date.now() - started).toBeLessThan(1300);
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      api.close();
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  describe('tokenize batching', () => {
    const card = (number: string) => ({
      merchantId: 'm',
      number,
      holderName: '',
      expiryMonth: 12,
      expiryYear: 2035,
      cvv: '',
      mode: 'test',
    });

    it('sends concurrent tokenize requests as one TokenizeBatch call and gives each its own answer or refusal', async () => {
      const batchSizes: number[] = [];
      const seenRequestIds: string[] = [];
      const vault = await startVault({
        TokenizeBatch: (call, callback) => {
          batchSizes.push(call.request.items.length);
          seenRequestIds.push(...call.request.items.map((item) => item.requestId));
          callback(null, {
            results: call.request.items.map((item) =>
              item.request?.number === 'bad'
                ? { refusal: refusalOf(new TesseraError('card_number_invalid')) }
                : { record: { ...record, last4: item.request!.number.slice(-4) } },
            ),
          });
        },
      });
      const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
      try {
        const answers = await Promise.allSettled([
          api.tokenize(card('4000000000000001'), { requestId: 'r1' }),
          api.tokenize(card('bad'), { requestId: 'r2' }),
          api.tokenize(card('4000000000000003'), { requestId: 'r3' }),
        ]);
        expect(batchSizes).toEqual([3]);
        expect(seenRequestIds).toEqual(['r1', 'r2', 'r3']);
        expect(answers[0]).toMatchObject({ status: 'fulfilled', value: { last4: '0001' } });
        expect(answers[1]).toMatchObject({ status: 'rejected', reason: { code: 'card_number_invalid', status: 400 } });
        expect(answers[2]).toMatchObject({ status: 'fulfilled', value: { last4: '0003' } });
      } finally {
        api.close();
        await vault.stop();
      }
    });

    it('sends provisional only when the caller asks for it, alone or in a batch', async () => {
      const seen: Array<[string, boolean]> = [];
      const vault = await startVault({
        Tokenize: (call, callback) => {
          seen.push([call.request.number, call.request.provisional]);
          callback(null, { ...record, provisional: call.request.provisional });
        },
        TokenizeBatch: (call, callback) => {
          call.request.items.forEach((item) => seen.push([item.request!.number, item.request!.provisional]));
          callback(null, {
            results: call.request.items.map((item) => ({ record: { ...record, provisional: item.request!.provisional } })),
          });
        },
      });
      const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
      try {
        expect((await api.tokenize({ ...card('1'), provisional: true }, { requestId: 'a' })).provisional).toBe(true);
        expect((await api.tokenize(card('2'), { requestId: 'b' })).provisional).toBe(false);
        await Promise.all([
          api.tokenize({ ...card('3'), provisional: true }, { requestId: 'c' }),
          api.tokenize(card('4'), { requestId: 'd' }),
        ]);
        expect(seen).toEqual([
          ['1', true],
          ['2', false],
          ['3', true],
          ['4', false],
        ]);
      } finally {
        api.close();
        await vault.stop();
      }
    });

    it('sends a lone request as a plain Tokenize call, and splits a crowd into batches of at most the maximum', async () => {
      const calls: string[] = [];
      const vault = await startVault({
        Tokenize: (call, callback) => {
          calls.push(`Tokenize ${requestIdFromMetadata(call.metadata)}`);
          callback(null, record);
        },
        TokenizeBatch: (call, callback) => {
          calls.push(`TokenizeBatch ${call.request.items.length}`);
          callback(null, { results: call.request.items.map(() => ({ record })) });
        },
      });
      const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
      try {
        await api.tokenize(card('4000000000000001'), { requestId: 'alone' });
        const crowd = Array.from({ length: MAX_TOKENIZE_BATCH + 2 }, (_, i) =>
          api.tokenize(card('4000000000000001'), { requestId: `c${i}` }),
        );
        await Promise.all(crowd);
        expect(calls.sort()).toEqual(['Tokenize alone', `TokenizeBatch ${MAX_TOKENIZE_BATCH}`, 'TokenizeBatch 2'].sort());
      } finally {
        api.close();
        await vault.stop();
      }
    });

    it('refuses every request of a batch the vault could not take, with the vault’s error', async () => {
      const vault = await startVault({
        TokenizeBatch: (_call, callback) => callback(toGrpcError(new TesseraError('service_unavailable'))),
      });
      const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
      try {
        const answers = await Promise.allSettled([
          api.tokenize(card('1'), { requestId: 'a' }),
          api.tokenize(card('2'), { requestId: 'b' }),
        ]);
        expect(answers).toEqual([
          expect.objectContaining({ status: 'rejected', reason: expect.objectContaining({ code: 'service_unavailable', status: 503 }) }),
          expect.objectContaining({ status: 'rejected', reason: expect.objectContaining({ code: 'service_unavailable', status: 503 }) }),
        ]);
      } finally {
        api.close();
        await vault.stop();
      }
    });

    it('falls back to single Tokenize calls when the vault does not know TokenizeBatch yet (rolling upgrade)', async () => {
      const seen: string[] = [];
      const vault = await startVault({
        Tokenize: (call, callback) => {
          seen.push(requestIdFromMetadata(call.metadata) ?? '');
          callback(null, { ...record, last4: call.request.number.slice(-4) });
        },
      });
      const api = vaultApiFromClient(createVaultClient(vault.address), 2000);
      try {
        const first = await Promise.all([
          api.tokenize(card('4000000000000001'), { requestId: 'a' }),
          api.tokenize(card('4000000000000002'), { requestId: 'b' }),
        ]);
        expect(first.map((r) => r.last4)).toEqual(['0001', '0002']);
        expect(seen.sort()).toEqual(['a', 'b']);
      } finally {
        api.close();
        await vault.stop();
      }
    });
  });
});

/** A real gRPC server speaking the proxy contract. */
async function startProxy(
  handlers: Partial<ProxyHandlers>,
  health?: HealthCheckHandlers,
): Promise<{ address: string; stop: () => Promise<void> }> {
  const server = new grpc.Server(SERVER_OPTIONS);
  if (health) server.addService(healthService, health);
  const unimplemented = (_call: unknown, callback: grpc.sendUnaryData<never>) => callback({ code: grpc.status.UNIMPLEMENTED });
  server.addService(proxyService, {
    Forward: unimplemented,
    ForwardBatch: (call: grpc.ServerWritableStream<unknown, unknown>) => call.emit('error', { code: grpc.status.UNIMPLEMENTED }),
    DryRun: unimplemented,
    ...handlers,
  } as ProxyHandlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, stop: async () => server.forceShutdown() };
}

describe('readiness of the vault and the proxy (for /readyz)', () => {
  /** grpc.health.v1 that answers `status` and records the service names and request ids it was asked for. */
  function recordingHealth(status: () => 'SERVING' | 'NOT_SERVING', asked: string[]): HealthCheckHandlers {
    return {
      Check: (call, callback) => {
        asked.push(`${call.request.service} ${requestIdFromMetadata(call.metadata) ?? ''}`);
        callback(null, { status: status() });
      },
      Watch: () => {},
    };
  }

  it('asks each peer’s grpc.health.v1 Check for its own service name: ready while SERVING, not while NOT_SERVING', async () => {
    let status: 'SERVING' | 'NOT_SERVING' = 'SERVING';
    const asked: string[] = [];
    const vault = await startVault(
      {},
      recordingHealth(() => status, asked),
    );
    const proxy = await startProxy(
      {},
      recordingHealth(() => status, asked),
    );
    const vaultApi = vaultApiFromClient(createVaultClient(vault.address), 5000);
    const proxyApi = proxyApiFromClient(createProxyClient(proxy.address), 5000);
    try {
      await expect(vaultApi.ready({ requestId: 'req-ready', timeoutMs: 5000 })).resolves.toEqual({ ready: true, detail: '' });
      await expect(proxyApi.ready({ requestId: 'req-ready', timeoutMs: 5000 })).resolves.toEqual({ ready: true, detail: '' });
      expect(asked).toContain('tessera.vault.v1.Vault req-ready');
      expect(asked).toContain('tessera.proxy.v1.Proxy req-ready');
      status = 'NOT_SERVING';
      await expect(vaultApi.ready({ requestId: 'r', timeoutMs: 5000 })).resolves.toEqual({ ready: false, detail: 'vault not ready' });
      await expect(proxyApi.ready({ requestId: 'r', timeoutMs: 5000 })).resolves.toEqual({ ready: false, detail: 'proxy not ready' });
    } finally {
      vaultApi.close();
      proxyApi.close();
      await Promise.all([vault.stop(), proxy.stop()]);
    }
  });
});

describe('proxy client adapter: forward batching', () => {
  const forwardRequest = (url: string): ForwardCall => ({
    merchantId: 'm',
    mode: 'test',
    token: 'tok.x',
    method: 'POST',
    url,
    headers: [],
    bodyTemplate: '',
    hasBody: false,
    allowedHosts: [],
  });
  const answer = (status: number) => ({ status, headers: [], body: Buffer.from(String(status)), pspMs: 1 });

  it('sends concurrent requests as one ForwardBatch call and hands each answer over as soon as it streams in', async () => {
    const seen: string[] = [];
    const wire: string[] = [];
    let releaseSlow: () => void = () => {};
    const proxy = await startProxy({
      ForwardBatch: (call) => {
        seen.push(...call.request.items.map((item) => `${item.requestId} ${item.request?.url}`));
        wire.push(
          ...call.request.items.map((item) => `${item.request?.keyMode} ${item.request?.httpMethod} ${item.request?.bodyTemplate}`),
        );
        call.write({ index: 1, response: answer(201) });
        call.write({ index: 2, refusal: refusalOf(new TesseraError('psp_destination_forbidden')) });
        releaseSlow = () => {
          call.write({ index: 0, response: answer(202) });
          call.end();
        };
      },
    });
    const api = proxyApiFromClient(createProxyClient(proxy.address), 5000);
    try {
      const slow = api.forward(forwardRequest('https://slow.example'), { requestId: 'r0' });
      const fast = api.forward(forwardRequest('https://fast.example'), { requestId: 'r1' });
      const refused = api.forward(forwardRequest('https://refused.example'), { requestId: 'r2' });
      await expect(fast).resolves.toMatchObject({ status: 201 });
      await expect(refused).rejects.toMatchObject({ code: 'psp_destination_forbidden' });
      expect(seen).toEqual(['r0 https://slow.example', 'r1 https://fast.example', 'r2 https://refused.example']);
      // The enums, and no body_template for a request without a body (has_body false).
      expect(new Set(wire)).toEqual(new Set(['MODE_TEST HTTP_METHOD_POST undefined']));
      releaseSlow();
      await expect(slow).resolves.toMatchObject({ status: 202 });
    } finally {
      api.close();
      await proxy.stop();
    }
  });

  it('refuses the items a failed or short batch call did not answer, and keeps those it did', async () => {
    const proxy = await startProxy({
      ForwardBatch: (call) => {
        call.write({ index: 0, response: answer(200) });
        setTimeout(() => call.emit('error', toGrpcError(new TesseraError('service_unavailable'))), 50);
      },
    });
    const api = proxyApiFromClient(createProxyClient(proxy.address), 5000);
    try {
      const answers = await Promise.allSettled([
        api.forward(forwardRequest('https://a.example'), { requestId: 'a' }),
        api.forward(forwardRequest('https://b.example'), { requestId: 'b' }),
      ]);
      expect(answers[0]).toMatchObject({ status: 'fulfilled', value: { status: 200 } });
      expect(answers[1]).toMatchObject({ status: 'rejected', reason: { code: 'service_unavailable', status: 503 } });
    } finally {
      api.close();
      await proxy.stop();
    }
  });

  it('answers psp_outcome_unknown for the items of a batch stream that ended without them', async () => {
    const proxy = await startProxy({
      ForwardBatch: (call) => {
        call.write({ index: 1, response: answer(200) });
        call.end();
      },
    });
    const api = proxyApiFromClient(createProxyClient(proxy.address), 5000);
    try {
      const answers = await Promise.allSettled([
        api.forward(forwardRequest('https://a.example'), { requestId: 'a' }),
        api.forward(forwardRequest('https://b.example'), { requestId: 'b' }),
      ]);
      expect(answers[0]).toMatchObject({ status: 'rejected', reason: { code: 'psp_outcome_unknown', status: 502 } });
      expect(answers[1]).toMatchObject({ status: 'fulfilled', value: { status: 200 } });
    } finally {
      api.close();
      await proxy.stop();
    }
  });
});

describe('proxy client adapter: what a failed Forward says about the PSP', () => {
  const forwardRequest: ForwardCall = {
    merchantId: 'm',
    mode: 'test',
    token: 'tok.x',
    method: 'POST',
    url: 'https://psp.example/charges',
    headers: [],
    bodyTemplate: '',
    hasBody: false,
    allowedHosts: [],
  };

  it('a proxy that is not running: 503 service_unavailable, since no call was started', async () => {
    const api = proxyApiFromClient(createProxyClient(`127.0.0.1:${await freePort()}`), 2000);
    try {
      await expect(api.forward(forwardRequest, { requestId: 'r' })).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    } finally {
      api.close();
    }
  });

  it('a proxy that accepts TCP but never completes the HTTP/2 handshake: 503 within the deadline, since no call was started', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket.on('error', () => undefined)));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const api = proxyApiFromClient(createProxyClient(`127.0.0.1:${(silent.address() as net.AddressInfo).port}`), 300);
    try {
      await expect(api.forward(forwardRequest, { requestId: 'r' })).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      api.close();
      sockets.forEach((s) => s.destroy());
      silent.close();
    }
  });

  it('a proxy that goes away while it holds the call: 502 psp_outcome_unknown', async () => {
    let received = () => {};
    const reached = new Promise<void>((resolve) => (received = resolve));
    const proxy = await startProxy({ Forward: () => received() });
    const api = proxyApiFromClient(createProxyClient(proxy.address), 5000);
    try {
      const forwarded = api.forward(forwardRequest, { requestId: 'r' });
      await reached;
      await proxy.stop();
      await expect(forwarded).rejects.toMatchObject({ code: 'psp_outcome_unknown', status: 502 });
    } finally {
      api.close();
    }
  });

  it('a proxy that does not answer within the deadline: 502 psp_outcome_unknown, not a retryable 503 or 504', async () => {
    const proxy = await startProxy({ Forward: () => {} });
    const api = proxyApiFromClient(createProxyClient(proxy.address), 300);
    try {
      await expect(api.forward(forwardRequest, { requestId: 'r' })).rejects.toMatchObject({ code: 'psp_outcome_unknown', status: 502 });
    } finally {
      api.close();
      await proxy.stop();
    }
  });

  it('a proxy that stops answering (hung): calls it holds end psp_outcome_unknown; once noticed, new ones are refused 503 unsent', async () => {
    const proxy: Freezable = { hung: false };
    let received = 0;
    const server = await startProxy(
      {
        Forward: (_call, callback) => {
          received++;
          if (!proxy.hung) callback(null, { status: 200, headers: [], body: Buffer.from('ok'), pspMs: 1 });
        },
      },
      healthOf(proxy),
    );
    const client = createProxyClient(server.address, undefined, QUICK_LIVENESS);
    const api = proxyApiFromClient(client, 1000);
    try {
      await expect(api.forward(forwardRequest, { requestId: 'r' })).resolves.toMatchObject({ status: 200 });
      proxy.hung = true;
      // Sent before the hang was noticed: it may have reached the PSP.
      await expect(api.forward(forwardRequest, { requestId: 'r' })).rejects.toMatchObject({ code: 'psp_outcome_unknown' });
      await waitForChannelState(client, grpc.connectivityState.TRANSIENT_FAILURE);
      await expect(api.forward(forwardRequest, { requestId: 'r' })).rejects.toMatchObject({
        code: 'service_unavailable',
        message: 'The proxy is not reachable; nothing was sent.',
      });
      expect(received).toBe(2);
      proxy.hung = false;
      await waitForChannelState(client, grpc.connectivityState.READY);
      await expect(api.forward(forwardRequest, { requestId: 'r' })).resolves.toMatchObject({ status: 200 });
    } finally {
      api.close();
      await server.stop();
    }
  });

  it('keeps the proxy’s own typed refusal', async () => {
    const proxy = await startProxy({ Forward: (_call, callback) => callback(toGrpcError(new TesseraError('psp_timeout'))) });
    const api = proxyApiFromClient(createProxyClient(proxy.address), 5000);
    try {
      await expect(api.forward(forwardRequest, { requestId: 'r' })).rejects.toMatchObject({ code: 'psp_timeout', status: 504 });
    } finally {
      api.close();
      await proxy.stop();
    }
  });
});
