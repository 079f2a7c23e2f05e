/** Reading a service's Prometheus metrics (METRICS_PORT=0: the port it logged) in integration tests. */
import type { ManagedProcess } from './harness';

/** The value of one sample whose labels include `labels` (label order is the client's business); undefined when none. */
export function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.split(' ').pop());
  }
  return undefined;
}

/** GET /metrics at the URL the service logged when its metrics listener came up. */
export async function scrape(service: ManagedProcess): Promise<string> {
  const url = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(service.output)?.[1];
  if (url === undefined) throw new Error(`${service.name} logged no metrics URL`);
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  if (!/^text\/plain/.test(res.headers.get('content-type') ?? '')) throw new Error(`${url} answered ${res.headers.get('content-type')}`);
  return res.text();
}
