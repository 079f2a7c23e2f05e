import { isHopByHopHeader } from '@tessera/common';

/** One header field as sent, in order (a name may repeat). */
export interface UpstreamHeader {
  name: string;
  value: string;
}

/**
 * Headers of an inbound request as they go upstream: the sender's, minus what describes the hop to
 * Tessera (hop-by-hop ones, those a `Connection` header names) and what the proxy sets for the hop
 * to the upstream (Host, Content-Length: the body may have changed length); plus the usual
 * reverse-proxy ones, so the upstream knows who sent it and to which name.
 */
const SET_BY_THE_PROXY = new Set(['host', 'content-length', 'expect']);

export function upstreamRequestHeaders(
  received: readonly UpstreamHeader[],
  via: { clientIp: string | undefined; host: string | undefined; proto: 'http' | 'https' },
): UpstreamHeader[] {
  const named = new Set(
    received
      .filter((h) => h.name.toLowerCase() === 'connection')
      .flatMap((h) => h.value.split(','))
      .map((v) => v.trim().toLowerCase()),
  );
  const out: UpstreamHeader[] = [];
  let forwardedFor: string | undefined;
  for (const h of received) {
    const name = h.name.toLowerCase();
    if (isHopByHopHeader(name) || named.has(name) || SET_BY_THE_PROXY.has(name)) continue;
    if (name === 'x-forwarded-for') {
      forwardedFor = forwardedFor === undefined ? h.value : `${forwardedFor}, ${h.value}`;
      continue;
    }
    if (name === 'x-forwarded-host' || name === 'x-forwarded-proto') continue;
    out.push({ name: h.name, value: h.value });
  }
  if (via.clientIp !== undefined) forwardedFor = forwardedFor === undefined ? via.clientIp : `${forwardedFor}, ${via.clientIp}`;
  if (forwardedFor !== undefined) out.push({ name: 'x-forwarded-for', value: forwardedFor });
  if (via.host !== undefined) out.push({ name: 'x-forwarded-host', value: via.host });
  out.push({ name: 'x-forwarded-proto', value: via.proto });
  return out;
}

/** The upstream's answer headers as they go back to the sender: hop-by-hop ones dropped, the rest as sent. */
export function clientResponseHeaders(answer: readonly UpstreamHeader[]): UpstreamHeader[] {
  return answer.filter((h) => !isHopByHopHeader(h.name.toLowerCase()));
}
