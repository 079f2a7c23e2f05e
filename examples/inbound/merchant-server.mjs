#!/usr/bin/env node
// A stand-in for a merchant's server behind an inbound route (docs/proxies.md, "Inbound routes"):
// it answers every request with what it received, so you can see that the card number never
// reached it, only an alias. PORT (default 4242, which `npm start`'s proxy lets requests reach).
import http from 'node:http';

/* eslint-disable no-restricted-properties -- an example reads its settings from the environment */

const port = Number(process.env.PORT ?? 4242);
http
  .createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      console.log(`${req.method} ${req.url} ${body}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ received: { method: req.method, path: req.url, body } }) + '\n');
    });
  })
  .listen(port, '127.0.0.1', () => console.log(`merchant server listening on http://127.0.0.1:${port}`));
