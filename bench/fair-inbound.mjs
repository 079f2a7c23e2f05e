// The fair baseline of an inbound route: the least any reverse proxy does with the same request. A bare
// node:http server reads the whole body (the inbound service must too: the card is found before anything
// is forwarded), sends it with the request's method, path and content type to the upstream through a
// keep-alive undici pool, and answers with the upstream's status and body. No route lookup, no card
// found or stored, no alias, no rate limit, no gRPC hop: the inbound target is measured against this.
// Usage: node bench/fair-inbound.mjs <port> <upstream URL (origin and path)>
import http from 'node:http';
import { Pool } from 'undici';

const port = Number(process.argv[2]);
const upstream = new URL(process.argv[3]);
const pool = new Pool(upstream.origin, { keepAliveTimeout: 60_000 });

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      const answer = await pool.request({
        path: upstream.pathname,
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/octet-stream' },
        body: Buffer.concat(chunks),
      });
      const body = Buffer.from(await answer.body.arrayBuffer());
      res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"upstream_unreachable"}');
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`fair inbound listening on ${port}\n`));
process.on('SIGTERM', () => process.exit(0));
