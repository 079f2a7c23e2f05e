import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  json(): any;
}

export interface RunningApp {
  baseUrl: string;
  port: number;
  request(
    method: string,
    path: string,
    opts?: { headers?: Record<string, string | string[]>; body?: string | Buffer },
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

/** Starts an Express app on an ephemeral loopback port and speaks raw HTTP to it. */
export async function startApp(app: Express): Promise<RunningApp> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    request: (method, path, opts = {}) =>
      new Promise<TestResponse>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, method, path, headers: opts.headers ?? {} }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              rawHeaders: res.rawHeaders,
              body,
              json: () => JSON.parse(body.toString('utf8')),
            });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        if (opts.body !== undefined) req.write(opts.body);
        req.end();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
