import { Writable } from 'node:stream';
import pino from 'pino';
import * as grpc from '@grpc/grpc-js';
import { LOG_REDACTION } from '@tessera/common';
import { createVaultClient, type RenderResponse, type VaultClient } from '@tessera/protos';
import { createVaultHandlers } from './grpcHandlers';
import { startVaultServer } from './server';
import { shutdownServer } from '@tessera/protos';
import type { Vault } from '../app/vault';

const logLines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});
const logger = pino({ level: 'debug', ...LOG_REDACTION }, sink);
const outcomes: string[] = [];

/** A vault whose Render answers only when the test says so. */
let releaseRender: () => void = () => undefined;
let announceRender: () => void = () => undefined;
const slowVault = {
  render: () =>
    new Promise<Buffer>((resolve) => {
      releaseRender = () => resolve(Buffer.from('rendered'));
      announceRender();
    }),
} as unknown as Vault;

/** Resolves once the next Render reached the vault: on a loaded machine that can take longer than any fixed wait. */
function nextRenderArrives(): Promise<void> {
  return new Promise((resolve) => (announceRender = resolve));
}

let server: grpc.Server;
let client: VaultClient;

beforeAll(async () => {
  const running = await startVaultServer(
    '127.0.0.1:0',
    createVaultHandlers(slowVault, logger, (rpc, outcome) => outcomes.push(`${rpc} ${outcome}`)),
  );
  server = running.server;
  client = createVaultClient(`127.0.0.1:${running.port}`);
});

afterAll(async () => {
  client?.close();
  if (server) await shutdownServer(server, 2000);
});

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
};

function render(requestId: string) {
  const metadata = new grpc.Metadata();
  metadata.set('x-request-id', requestId);
  let settle: (err: grpc.ServiceError | null) => void = () => undefined;
  const done = new Promise<grpc.ServiceError | null>((resolve) => (settle = resolve));
  const call = client.render(
    { merchantId: 'm', mode: 'test', token: 'tok', template: '[CARD_NUMBER]', contentType: '' },
    metadata,
    (err: grpc.ServiceError | null, _res?: RenderResponse) => settle(err),
  );
  return { call, done };
}

const linesOf = (requestId: string) => logLines.filter((l) => l.requestId === requestId).map((l) => l.msg);

describe('the vault logs a render as ok only once its answer went out', () => {
  it('logs "rpc ok" and counts ok for a render the caller received', async () => {
    const arrived = nextRenderArrives();
    const { done } = render('req-delivered');
    await arrived;
    releaseRender();
    expect(await done).toBeNull();
    await until(() => outcomes.includes('Render ok'));
    expect(linesOf('req-delivered')).toEqual(['rpc ok']);
  });

  it('does not log "ok" for a render the caller had cancelled before the answer was written', async () => {
    const arrived = nextRenderArrives();
    const { call, done } = render('req-cancelled');
    await arrived;
    call.cancel();
    expect((await done)?.code).toBe(grpc.status.CANCELLED);
    // Time for the cancellation (RST_STREAM) to reach the vault, as when the proxy gives up.
    await new Promise((r) => setTimeout(r, 500));
    releaseRender();
    await until(() => linesOf('req-cancelled').length > 0);
    await new Promise((r) => setTimeout(r, 100));
    expect(linesOf('req-cancelled')).toEqual(['rpc answer not delivered']);
    expect(outcomes).toContain('Render not_delivered');
    expect(outcomes.filter((o) => o === 'Render ok')).toHaveLength(1);
  });
});
