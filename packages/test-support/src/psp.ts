import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { ManagedProcess, ROOT } from '@tessera/stack';
import { freePort } from './redisServer';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type RecorderReply = (req: RecordedRequest, res: http.ServerResponse) => void;

/** A stand-in PSP that records exactly what it received and how many connections it saw. */
export class PspRecorder {
  requests: RecordedRequest[] = [];
  connections = 0;
  static readonly okReply: RecorderReply = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  };
  reply: RecorderReply = PspRecorder.okReply;
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      this.requests.push(recorded);
      this.reply(recorded, res);
    });
  });
  port = 0;

  constructor(readonly host = '127.0.0.1') {
    this.server.on('connection', (socket) => {
      this.connections++;
      socket.on('error', () => undefined);
    });
  }

  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, this.host, () => resolve());
    });
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  reset(): void {
    this.reply = PspRecorder.okReply;
    this.requests = [];
    this.connections = 0;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** packages/sandbox-psp as its own process on a free port, once it listens; the caller stops `sandbox`. */
export async function startSandboxPsp(): Promise<{ sandbox: ManagedProcess; chargesUrl: string }> {
  const port = await freePort();
  const sandbox = new ManagedProcess('sandbox', process.execPath, [path.join(ROOT, 'packages/sandbox-psp/dist/main.js')], {
    PATH: process.env.PATH,
    SANDBOX_PSP_PORT: String(port),
  }).start();
  await sandbox.waitForOutput('sandbox psp listening');
  return { sandbox, chargesUrl: `http://127.0.0.1:${port}/v1/charges` };
}
