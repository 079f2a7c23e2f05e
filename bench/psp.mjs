// The bench's stand-in PSP: a bare node:http server in its own process that reads the whole
// request body and answers like a card charge API. Usage: node bench/psp.mjs <port>
import http from 'node:http';

const port = Number(process.argv[2]);
const reply = Buffer.from('{"id":"ch_bench","object":"charge","status":"succeeded","amount":1000,"currency":"eur"}');

const server = http.createServer((req, res) => {
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
  });
  req.on('end', () => {
    res.writeHead(size > 0 ? 200 : 400, { 'content-type': 'application/json', 'content-length': reply.length });
    res.end(reply);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`psp listening on ${port}\n`));
process.on('SIGTERM', () => process.exit(0));
