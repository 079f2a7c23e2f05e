import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@tessera/common';
import { decideCharge, type ChargeAttempt } from './charges';

const MAX_BODY_BYTES = 64 * 1024;

/** Reads `card[number]` style form fields and nested JSON alike into one shape. */
function parseAttempt(contentType: string, raw: string): ChargeAttempt | undefined {
  if (contentType.includes('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(raw);
    return {
      amount: form.get('amount') ?? undefined,
      currency: form.get('currency') ?? undefined,
      number: form.get('card[number]') ?? undefined,
      expMonth: form.get('card[exp_month]') ?? undefined,
      expYear: form.get('card[exp_year]') ?? undefined,
      cvc: form.get('card[cvc]') ?? undefined,
    };
  }
  try {
    const body = JSON.parse(raw) as { amount?: unknown; currency?: unknown; card?: Record<string, unknown> };
    if (typeof body !== 'object' || body === null) return undefined;
    const card = body.card ?? {};
    return {
      amount: body.amount,
      currency: body.currency,
      number: card.number,
      expMonth: card.exp_month,
      expYear: card.exp_year,
      cvc: card.cvc,
    };
  } catch {
    return undefined;
  }
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'request-id': `req_sandbox_${Date.now().toString(36)}`,
  });
  res.end(payload);
}

/**
 * A stand-in PSP for local development: `POST /v1/charges` with a JSON or form body (Stripe's
 * `card[number]` fields included, so the stripe SDK's `charges.create` reaches it). Over HTTPS
 * when given a certificate and key (PEM), as the forward proxy needs.
 */
export function createSandboxPsp(logger: Logger, tls?: { cert: string | Buffer; key: string | Buffer }): http.Server {
  const handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/charges') {
      send(res, 404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'Try POST /v1/charges.' } });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      const attempt = parseAttempt(req.headers['content-type'] ?? '', Buffer.concat(chunks).toString('utf8'));
      const answer = attempt
        ? decideCharge(attempt)
        : {
            status: 400,
            body: {
              error: { type: 'invalid_request_error', code: 'invalid_body', message: 'Send JSON or form-encoded charge parameters.' },
            },
          };
      // Outcome only: the request carried card data and must not reach the log.
      logger.info({ status: answer.status }, 'sandbox charge');
      send(res, answer.status, answer.body);
    });
  };
  return tls === undefined ? http.createServer(handle) : https.createServer({ cert: tls.cert, key: tls.key }, handle);
}

export function listen(server: http.Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}
