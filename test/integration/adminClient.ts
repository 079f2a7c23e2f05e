/**
 * A client for the admin API that behaves like the dashboard page: it keeps the session cookie
 * and sends the CSRF token on every change. Node's fetch keeps no cookies, so this one does.
 */
import { readResponse, type TestResponse } from './harness';

export type AdminResponse = TestResponse;

export class AdminClient {
  cookie: string | undefined;
  csrfToken: string | undefined;

  constructor(
    readonly baseUrl: string,
    /** Sent as X-Forwarded-For: the gateway trusts 127.0.0.1, so this is the client address it sees. */
    public clientIp?: string,
  ) {}

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<AdminResponse> {
    const all: Record<string, string> = { ...headers };
    if (this.clientIp !== undefined) all['x-forwarded-for'] ??= this.clientIp;
    if (this.cookie !== undefined) all.cookie ??= this.cookie;
    if (method !== 'GET' && this.csrfToken !== undefined) all['x-csrf-token'] ??= this.csrfToken;
    if (body !== undefined) all['content-type'] ??= 'application/json';
    const res = await fetch(`${this.baseUrl}/admin/v1${path}`, {
      method,
      headers: all,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) {
      const [pair] = setCookie.split(';');
      this.cookie = pair?.endsWith('=') ? undefined : pair;
    }
    return readResponse(res);
  }

  async login(email: string, password: string): Promise<AdminResponse> {
    const res = await this.call('POST', '/login', { email, password });
    if (res.status === 200) this.csrfToken = res.body.csrfToken;
    return res;
  }
}

export async function loggedIn(baseUrl: string, email: string, password: string, clientIp?: string): Promise<AdminClient> {
  const client = new AdminClient(baseUrl, clientIp);
  const res = await client.login(email, password);
  if (res.status !== 200) throw new Error(`login of ${email} failed: ${res.status} ${res.text}`);
  return client;
}
