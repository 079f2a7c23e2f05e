// The fair baseline of the forward proxy: the least any proxy does that can read, and so rewrite, a
// PSP request inside a CONNECT tunnel. It answers CONNECT with 200, terminates TLS in the tunnel with
// a certificate for the PSP host, parses each HTTP/1.1 request (keep-alive), sends it to the host the
// CONNECT named over a keep-alive HTTPS undici pool, and answers with the PSP's status and body. No
// proxy authentication, no route, no alias replaced (its client sends the card number), no destination
// policy, no request log, no gRPC hop: the forward target is measured against this, not against a
// bare pipe, which never decrypts and so could not do the forward proxy's job at all.
// Usage: node bench/fair-forward.mjs <port> <cert file> <key file> <CA file the PSP's certificate is signed by>
import fs from 'node:fs';
import http from 'node:http';
import tls from 'node:tls';
import { Agent } from 'undici';

const [port, certFile, keyFile, caFile] = process.argv.slice(2);
const secureContext = tls.createSecureContext({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) });
const agent = new Agent({ keepAliveTimeout: 60_000, connect: { ca: fs.readFileSync(caFile) } });
/** Headers that describe one hop, never forwarded (as the forward proxy drops them). */
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

const tunnelled = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !HOP.has(name)));
      const answer = await agent.request({
        origin: `https://${req.socket.tunnelTarget}`,
        path: req.url,
        method: req.method,
        headers,
        body: Buffer.concat(chunks),
      });
      const body = Buffer.from(await answer.body.arrayBuffer());
      res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"psp_unreachable"}');
    }
  });
});
tunnelled.keepAliveTimeout = 60_000;

const server = http.createServer((req, res) => res.writeHead(405).end());
server.on('connect', (req, socket, head) => {
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head.length > 0) socket.unshift(head);
  const secure = new tls.TLSSocket(socket, { isServer: true, secureContext });
  secure.tunnelTarget = req.url;
  secure.on('error', () => socket.destroy());
  tunnelled.emit('connection', secure);
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write(`fair forward listening on ${port}\n`));
process.on('SIGTERM', () => process.exit(0));
