import { apiErrorFrom, TesseraApiError, TesseraConnectionError, TesseraSdkError, TesseraTimeoutError } from './errors';
import type {
  CvcSession,
  DryRunResult,
  FormSession,
  FormSessionCreateInput,
  FormSessionList,
  EventList,
  EventListParams,
  TesseraEvent,
  WebhookEndpoint,
  WebhookEndpointCreateInput,
  WebhookEndpointList,
  WebhookSecretRotateInput,
  FormSessionListParams,
  ProxyRequest,
  PspResponse,
  RequestOptions,
  TokenCreateInput,
  TokenRecord,
  TokenUpdateInput,
} from './types';

export interface TesseraOptions {
  /**
   * The API base URL, as `npm start` prints it: `http://127.0.0.1:8080/v1`. When it does not end
   * with the version segment, `/v1` is appended. Default: `http://127.0.0.1:8080/v1`.
   */
  baseUrl?: string;
  /**
   * Time for one complete answer, body included (default 60000). A proxy call waits for the PSP,
   * which Tessera allows up to PSP_TIMEOUT_MS (30 s by default), so keep this above that.
   */
  timeoutMs?: number;
  /** A fetch implementation (default: the global fetch of Node 20). */
  fetch?: typeof fetch;
}

export const SDK_VERSION = '0.1.0';
const DEFAULT_BASE_URL = 'http://127.0.0.1:8080/v1';
const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  options?: RequestOptions | undefined;
}

function normaliseBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError('baseUrl must be an absolute URL such as http://127.0.0.1:8080/v1.');
  }
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = /\/v\d+$/.test(path) ? path : `${path}/v1`;
  return url.toString().replace(/\/+$/, '');
}

function numberHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * The Tessera API client. The API key is given once, at initialisation (as the specification
 * says), and sent as `x-api-key` on every call. Keep it on your server: it is a secret.
 *
 * ```ts
 * const tessera = new Tessera(process.env.TESSERA_API_KEY!, { baseUrl: 'http://127.0.0.1:8080/v1' });
 * const card = await tessera.tokens.create({ number: '4242424242424242', expiryMonth: 12, expiryYear: 2030, cvv: 123 });
 * ```
 */
export class Tessera {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly tokens: {
    /** POST /v1/token: 201 with the token record (200 with your existing one for `dedupe: true`). */
    create(card: TokenCreateInput, options?: RequestOptions): Promise<TokenRecord>;
    /** GET /v1/token/{token}: the record, never the PAN or CVV. */
    get(token: string, options?: RequestOptions): Promise<TokenRecord>;
    /** DELETE /v1/token/{token}: removes the card data. */
    delete(token: string, options?: RequestOptions): Promise<void>;
    /**
     * POST /v1/token/{token}/retain: keeps a token made in a browser (provisional) for as long as
     * its card, like a token from create. Idempotent: a retained token answers the same record.
     */
    retain(token: string, options?: RequestOptions): Promise<TokenRecord>;
    /** PATCH /v1/token/{token}: a re-issued card's new expiry and/or holder name; the number never changes. */
    update(token: string, changes: TokenUpdateInput, options?: RequestOptions): Promise<TokenRecord>;
    /**
     * POST /v1/token/{token}/cvc: attaches a CVV your server collected again, used by the token's
     * next render only (then 422 cvv_unavailable) and gone after CVV_TTL_SECONDS. Pass an
     * `idempotencyKey` to retry safely. In a browser use tessera.js's cvcField instead (see openCvcSession).
     */
    recollectCvc(token: string, cvv: number | string, options?: RequestOptions): Promise<TokenRecord>;
    /**
     * POST /v1/token/{token}/cvc-sessions: the single-use grant (valid for minutes) that lets the
     * browser's CVC-only field attach one CVC to this token. Give `{ token, secret }` to the page
     * for `tessera.cvcField({ cvcSession })`; the page never sees the CVC, nor you.
     */
    openCvcSession(token: string, options?: RequestOptions): Promise<CvcSession>;
  };
  readonly proxy: {
    /**
     * POST /v1/proxy: the PSP's answer, whatever its status (a decline is a PSP answer, not an
     * exception). Throws TesseraApiError only for errors made by Tessera itself.
     */
    forward(request: ProxyRequest, options?: RequestOptions): Promise<PspResponse>;
    /** POST /v1/proxy/dry-run: what forward would send, with card values masked. Nothing is sent. */
    dryRun(request: ProxyRequest, options?: RequestOptions): Promise<DryRunResult>;
  };

  readonly formSessions: {
    /**
     * POST /v1/form-sessions: a hosted payment page for one shopper; send the browser to `url`.
     * Pass an `idempotencyKey` (e.g. your order id) to retry safely.
     */
    create(params: FormSessionCreateInput, options?: RequestOptions): Promise<FormSession>;
    /** GET /v1/form-sessions/{id}: its status, payment and, once completed, the token (retain it). */
    retrieve(id: string, options?: RequestOptions): Promise<FormSession>;
    /** GET /v1/form-sessions: your sessions of this key's mode, newest first; page with startingAfter. */
    list(params?: FormSessionListParams, options?: RequestOptions): Promise<FormSessionList>;
  };

  /** Where Tessera sends signed events (docs/webhooks.md, "Webhook endpoints"); of this key's merchant and mode. */
  readonly webhookEndpoints: {
    /** POST /v1/webhook-endpoints: 201 with the endpoint and its `secret` (shown only here and by rotateSecret). */
    create(params: WebhookEndpointCreateInput, options?: RequestOptions): Promise<WebhookEndpoint>;
    /** GET /v1/webhook-endpoints/{id}: without the secret. */
    retrieve(id: string, options?: RequestOptions): Promise<WebhookEndpoint>;
    /** GET /v1/webhook-endpoints. */
    list(options?: RequestOptions): Promise<WebhookEndpointList>;
    /** DELETE /v1/webhook-endpoints/{id}. */
    del(id: string, options?: RequestOptions): Promise<void>;
    /** POST /v1/webhook-endpoints/{id}/rotate-secret: the new secret; the old one signs too until it expires. */
    rotateSecret(id: string, params?: WebhookSecretRotateInput, options?: RequestOptions): Promise<WebhookEndpoint>;
  };

  /** The events of this key's merchant and mode (docs/webhooks.md, "Events"). */
  readonly events: {
    /** GET /v1/events: newest first; filter by type, page with startingAfter. */
    list(params?: EventListParams, options?: RequestOptions): Promise<EventList>;
    /** GET /v1/events/{id}. */
    retrieve(id: string, options?: RequestOptions): Promise<TesseraEvent>;
  };

  readonly #apiKey: string;
  readonly #fetch: typeof fetch;

  constructor(apiKey: string, options: TesseraOptions = {}) {
    if (typeof apiKey !== 'string' || apiKey.trim() === '') {
      throw new TypeError('Tessera needs an API key: new Tessera(apiKey, { baseUrl }).');
    }
    // Every route this SDK calls answers 403 publishable_key_forbidden to a publishable key: say so now.
    if (apiKey.startsWith('tpk_')) {
      throw new TypeError('This SDK is for servers and needs a secret key (tsk_…); a publishable key (tpk_…) belongs in the browser.');
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new TypeError('timeoutMs must be a positive integer.');
    this.#apiKey = apiKey;
    this.#fetch = options.fetch ?? fetch;
    this.baseUrl = normaliseBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
    this.timeoutMs = timeoutMs;

    const tokenPath = (token: string) => {
      if (typeof token !== 'string' || token === '') throw new TypeError('token must be a non-empty string.');
      return `/token/${encodeURIComponent(token)}`;
    };
    this.tokens = {
      create: async (card, opts) => (await this.#json<TokenRecord>({ method: 'POST', path: '/token', body: card, options: opts })).body,
      get: async (token, opts) => (await this.#json<TokenRecord>({ method: 'GET', path: tokenPath(token), options: opts })).body,
      delete: async (token, opts) => {
        await this.#send({ method: 'DELETE', path: tokenPath(token), options: opts });
      },
      retain: async (token, opts) =>
        (await this.#json<TokenRecord>({ method: 'POST', path: `${tokenPath(token)}/retain`, options: opts })).body,
      update: async (token, changes, opts) =>
        (await this.#json<TokenRecord>({ method: 'PATCH', path: tokenPath(token), body: changes, options: opts })).body,
      recollectCvc: async (token, cvv, opts) =>
        (await this.#json<TokenRecord>({ method: 'POST', path: `${tokenPath(token)}/cvc`, body: { cvv }, options: opts })).body,
      openCvcSession: async (token, opts) =>
        (await this.#json<CvcSession>({ method: 'POST', path: `${tokenPath(token)}/cvc-sessions`, options: opts })).body,
    };
    this.proxy = {
      forward: async (request, opts) => {
        const { response, bytes } = await this.#send({ method: 'POST', path: '/proxy', body: request, options: opts });
        return pspResponse(response, bytes);
      },
      dryRun: async (request, opts) =>
        (await this.#json<DryRunResult>({ method: 'POST', path: '/proxy/dry-run', body: request, options: opts })).body,
    };
    this.formSessions = {
      create: async (params, opts) => {
        if (params === null || typeof params !== 'object') {
          throw new TypeError('formSessions.create needs the session: { returnUrl, amount?, currency?, completionUrl?, … }.');
        }
        return (await this.#json<FormSession>({ method: 'POST', path: '/form-sessions', body: params, options: opts })).body;
      },
      retrieve: async (id, opts) => {
        if (typeof id !== 'string' || !/^fs_[A-Za-z0-9_-]{32}$/.test(id)) {
          throw new TypeError('formSessions.retrieve needs a form session id (fs_ followed by 32 characters).');
        }
        return (await this.#json<FormSession>({ method: 'GET', path: `/form-sessions/${id}`, options: opts })).body;
      },
      list: async (params = {}, opts) => {
        const query = new URLSearchParams();
        if (params.limit !== undefined) query.set('limit', String(params.limit));
        if (params.startingAfter !== undefined) query.set('startingAfter', params.startingAfter);
        if (params.status !== undefined) query.set('status', params.status);
        const suffix = query.size > 0 ? `?${query.toString()}` : '';
        return (await this.#json<FormSessionList>({ method: 'GET', path: `/form-sessions${suffix}`, options: opts })).body;
      },
    };

    const idPath = (what: string, id: string) => {
      if (typeof id !== 'string' || id === '') throw new TypeError(`${what} needs an id (a non-empty string).`);
      return encodeURIComponent(id);
    };
    this.webhookEndpoints = {
      create: async (params, opts) => {
        if (params === null || typeof params !== 'object') {
          throw new TypeError('webhookEndpoints.create needs the endpoint: { url, enabledEvents }.');
        }
        return (await this.#json<WebhookEndpoint>({ method: 'POST', path: '/webhook-endpoints', body: params, options: opts })).body;
      },
      retrieve: async (id, opts) =>
        (
          await this.#json<WebhookEndpoint>({
            method: 'GET',
            path: `/webhook-endpoints/${idPath('webhookEndpoints.retrieve', id)}`,
            options: opts,
          })
        ).body,
      list: async (opts) => (await this.#json<WebhookEndpointList>({ method: 'GET', path: '/webhook-endpoints', options: opts })).body,
      del: async (id, opts) => {
        await this.#send({ method: 'DELETE', path: `/webhook-endpoints/${idPath('webhookEndpoints.del', id)}`, options: opts });
      },
      rotateSecret: async (id, params = {}, opts) =>
        (
          await this.#json<WebhookEndpoint>({
            method: 'POST',
            path: `/webhook-endpoints/${idPath('webhookEndpoints.rotateSecret', id)}/rotate-secret`,
            body: params,
            options: opts,
          })
        ).body,
    };
    this.events = {
      list: async (params = {}, opts) => {
        const query = new URLSearchParams();
        if (params.type !== undefined) query.set('type', params.type);
        if (params.limit !== undefined) query.set('limit', String(params.limit));
        if (params.startingAfter !== undefined) query.set('startingAfter', params.startingAfter);
        const suffix = query.size > 0 ? `?${query.toString()}` : '';
        return (await this.#json<EventList>({ method: 'GET', path: `/events${suffix}`, options: opts })).body;
      },
      retrieve: async (id, opts) =>
        (await this.#json<TesseraEvent>({ method: 'GET', path: `/events/${idPath('events.retrieve', id)}`, options: opts })).body,
    };
  }

  /** Never print the key: it is a secret (console.log(tessera) shows this instead). */
  toJSON(): { baseUrl: string; timeoutMs: number } {
    return { baseUrl: this.baseUrl, timeoutMs: this.timeoutMs };
  }

  async #json<T>(call: Call): Promise<{ body: T; response: Response }> {
    const { response, bytes } = await this.#send(call);
    try {
      return { body: JSON.parse(new TextDecoder().decode(bytes)) as T, response };
    } catch (err) {
      throw new TesseraSdkError(`Tessera answered ${response.status} with a body that is not JSON.`, { cause: err });
    }
  }

  /**
   * Sends one request and reads the whole body under one deadline. Any response carrying
   * `x-tessera-error`, and any non-2xx that is not a PSP pass-through, becomes a TesseraApiError.
   */
  async #send(call: Call): Promise<{ response: Response; bytes: Uint8Array }> {
    const opts = call.options ?? {};
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const headers: Record<string, string> = {
      'x-api-key': this.#apiKey,
      accept: 'application/json',
      'user-agent': `tessera-sdk-node/${SDK_VERSION}`,
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.idempotencyKey !== undefined) {
      if (opts.idempotencyKey === '' || opts.idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
        throw new TypeError(`idempotencyKey must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
      }
      headers['idempotency-key'] = opts.idempotencyKey;
    }
    if (opts.requestId !== undefined) headers['x-request-id'] = opts.requestId;

    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    let response: Response;
    let bytes: Uint8Array;
    try {
      response = await this.#fetch(`${this.baseUrl}${call.path}`, {
        method: call.method,
        headers,
        ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
        signal,
        redirect: 'manual',
      });
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch (err) {
      if (timeout.aborted) throw new TesseraTimeoutError(timeoutMs);
      if (opts.signal?.aborted) throw opts.signal.reason ?? err;
      throw new TesseraConnectionError(`Could not reach Tessera at ${this.baseUrl}.`, { cause: err });
    }

    const isPassThrough = call.path === '/proxy' && !response.headers.has('x-tessera-error');
    if (response.ok || isPassThrough) return { response, bytes };
    throw errorFromResponse(response, bytes);
  }
}

function errorFromResponse(response: Response, bytes: Uint8Array): TesseraApiError {
  const retryAfterSeconds = numberHeader(response.headers, 'retry-after');
  const requestId = response.headers.get('x-request-id') ?? undefined;
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { error?: Record<string, unknown> };
    const e = parsed.error;
    if (e && typeof e.code === 'string' && typeof e.type === 'string') {
      return apiErrorFrom({
        status: response.status,
        type: e.type,
        code: e.code,
        message: typeof e.message === 'string' ? e.message : e.code,
        param: typeof e.param === 'string' ? e.param : undefined,
        requestId: typeof e.requestId === 'string' ? e.requestId : requestId,
        retryAfterSeconds,
      });
    }
  } catch {
    // Not our envelope (e.g. a load balancer's HTML page): described below.
  }
  return apiErrorFrom({
    status: response.status,
    type: 'api_error',
    code: 'unexpected_response',
    message: `Tessera answered ${response.status} without an error envelope.`,
    requestId,
    retryAfterSeconds,
  });
}

function pspResponse(response: Response, body: Uint8Array): PspResponse {
  return {
    status: response.status,
    headers: response.headers,
    body,
    text: () => new TextDecoder().decode(body),
    json: <T>() => JSON.parse(new TextDecoder().decode(body)) as T,
    requestId: response.headers.get('x-tessera-request-id') ?? response.headers.get('x-request-id') ?? undefined,
    pspMs: numberHeader(response.headers, 'x-tessera-psp-ms'),
    totalMs: numberHeader(response.headers, 'x-tessera-total-ms'),
  };
}
