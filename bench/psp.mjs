// The bench's stand-in PSP: a bare node:http server in its own process that reads the whole
// request body and answers like a card charge API; with a certificate, the same handler over HTTPS
// too (the forward proxy only sends to PSPs over TLS, as real ones are).
// Usage: node bench/psp.mjs <port> [<tls port> <cert file> <key file>]
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const [port, tlsPort, certFile, keyFile] = process.argv.slice(2);
const reply = Buffer.from('{"id":"ch_bench","object":"charge","status":"succeeded","amount":1000,"currency":"eur"}');

const charge = (req, res) => {
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
  });
  req.on('end', () => {
    res.writeHead(size > 0 ? 200 : 400, { 'content-type': 'application/json', 'content-length': reply.length });
    res.end(reply);
  });
};

const server = http.createServer(charge);
server.keepAliveTimeout = 60_000;
server.listen(Number(port), '127.0.0.1', () => process.stdout.write(`psp listening on ${port}\n`));
if (tlsPort) {
  const secure = https.createServer({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) }, charge);
  secure.keepAliveTimeout = 60_000;
  secure.listen(Number(tlsPort), '127.0.0.1', () => process.stdout.write(`psp listening over https on ${tlsPort}\n`));
}
process.on('SIGTERM', () => process.exit(0));
