import type { ServerResponse } from 'node:http';
import type { Express, Response } from 'express';

export interface SecurityHeaderOptions {
  /** `Strict-Transport-Security: max-age=…` when above 0 (clients reach the gateway over HTTPS only). */
  hstsMaxAgeSeconds: number;
}

const PASS_THROUGH = Symbol('tessera.pspPassThrough');
type Marked = Response & { [PASS_THROUGH]?: true };

/** Marks a response as the PSP's answer passed through, whose own headers decide how it is rendered. */
export function markPspPassThrough(res: Response): void {
  (res as Marked)[PASS_THROUGH] = true;
}

/**
 * Headers the gateway adds to every response it makes. A browser should never render, frame or
 * sniff a JSON answer of ours, nor leak a URL (which can hold a token) in a Referer.
 */
export const SERVICE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
};

/**
 * A PSP's answer is passed through unchanged (PRODUCT.md), and it may be a page meant for a
 * browser, e.g. a 3-D Secure challenge that must be framed and must load its scripts. Only
 * headers that cannot change how a correctly labelled answer behaves are added: nosniff (affects
 * only mislabelled content; the PSP's own wins) and HSTS (concerns the gateway's own origin, so a
 * PSP's is dropped, see domain/pspResponseHeaders.ts). Framing, CSP, referrer and caching headers
 * stay the PSP's call.
 */
export const PASS_THROUGH_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
};

function hstsValue(options: SecurityHeaderOptions): string | undefined {
  return options.hstsMaxAgeSeconds > 0 ? `max-age=${options.hstsMaxAgeSeconds}` : undefined;
}

const SERVICE_HEADER_LIST = Object.entries(SERVICE_SECURITY_HEADERS);
const PASS_THROUGH_HEADER_LIST = Object.entries(PASS_THROUGH_SECURITY_HEADERS);

const BEFORE_HEAD = Symbol('tessera.beforeHead');
type WithHook = ServerResponse & { [BEFORE_HEAD]?: (res: ServerResponse) => void };

/**
 * Runs `hook` when this response's status line is about to go out, before the security headers
 * are added (so headers it sets come first, as they always have). One hook per response; it runs
 * only in an app set up with installSecurityHeaders.
 */
export function beforeHead(res: Response, hook: (res: ServerResponse) => void): void {
  (res as unknown as WithHook)[BEFORE_HEAD] = hook;
}

/**
 * Adds the security headers at the last moment, when the status line goes out, so every response
 * gets them, whichever route or error handler wrote it. A header a handler already set wins: the
 * dashboard's page sets its own CSP, a PSP's answer keeps its own headers.
 *
 * The hook sits on the app's own response prototype (Express gives every request's response that
 * prototype before the first middleware runs) rather than being wrapped around each response:
 * wrapping cost two closures per request. Node writes every head through `this.writeHead`.
 */
export function installSecurityHeaders(app: Express, options: SecurityHeaderOptions): void {
  const hsts = hstsValue(options);
  const proto = app.response as unknown as ServerResponse;
  const writeHead = proto.writeHead;
  proto.writeHead = function (this: WithHook, ...args: unknown[]) {
    if (!this.headersSent) {
      const hook = this[BEFORE_HEAD];
      if (hook !== undefined) hook(this);
      const headers = (this as Marked)[PASS_THROUGH] ? PASS_THROUGH_HEADER_LIST : SERVICE_HEADER_LIST;
      for (let i = 0; i < headers.length; i++) {
        const [name, value] = headers[i]!;
        if (!this.hasHeader(name)) this.setHeader(name, value);
      }
      if (hsts !== undefined && !this.hasHeader('strict-transport-security')) this.setHeader('strict-transport-security', hsts);
    }
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
}
