// The fair proxy baseline: the least any Express proxy does with a /v1/proxy call. It parses the
// same JSON body Tessera's gateway gets, forwards pspBody with pspHeaders to pspUrl through a
// keep-alive undici pool, and answers with the PSP's status and body. No auth, no card data, no
// placeholders, no audit: Tessera's /v1/proxy is measured against this, not against an echo.
// Usage: node bench/fair-proxy.mjs <port>
import express from 'express';
import { Agent } from 'undici';

const port = Number(process.argv[2]);
const agent = new Agent({ keepAliveTimeout: 60_000 });
const app = express();
app.post('/forward', express.json(), async (req, res) => {
  try {
    const { pspUrl, pspHeaders, pspBody } = req.body;
    const psp = await agent.request({
      origin: new URL(pspUrl).origin,
      path: new URL(pspUrl).pathname,
      method: 'POST',
      headers: pspHeaders,
      body: pspBody,
    });
    const body = Buffer.from(await psp.body.arrayBuffer());
    res.status(psp.statusCode).type('application/json').send(body);
  } catch {
    res.status(502).json({ error: 'psp_unreachable' });
  }
});
app.listen(port, '127.0.0.1', () => process.stdout.write(`fair proxy listening on ${port}\n`));
process.on('SIGTERM', () => process.exit(0));
