// The baseline: the least an Express service can do with a JSON POST (parse it, answer it).
// Whatever Tessera's gateway adds on top is measured against this. Usage: node bench/express-echo.mjs <port>
import express from 'express';

const port = Number(process.argv[2]);
const app = express();
app.post('/echo', express.json(), (req, res) => {
  res.status(201).json(req.body);
});
app.listen(port, '127.0.0.1', () => process.stdout.write(`express echo listening on ${port}\n`));
process.on('SIGTERM', () => process.exit(0));
