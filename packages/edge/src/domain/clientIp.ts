import { ipInCidrs, normalizeIp, type Cidr } from '@tessera/common';

/** X-Forwarded-For entries sometimes carry a port (`1.2.3.4:5678`, `[::1]:80`). */
function stripPort(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  if (bracketed?.[1] !== undefined) return bracketed[1];
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(entry);
  if (v4WithPort?.[1] !== undefined) return v4WithPort[1];
  return entry;
}

/**
 * The address a request comes from. The socket peer is authoritative unless it is one of our
 * own trusted proxies; only then is X-Forwarded-For read, from the right (the entries nearest to
 * us were written by proxies we trust), skipping further trusted proxies. Anything to the left of
 * the first untrusted hop is client-controlled and ignored, so a client cannot spoof its way into
 * an allowlist. Returns undefined when the address cannot be determined; that matches no allowlist.
 */
export function resolveClientIp(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxies: readonly Cidr[],
): string | undefined {
  const peer = socketAddress === undefined ? undefined : normalizeIp(socketAddress);
  if (peer === undefined) return undefined;
  if (trustedProxies.length === 0 || !ipInCidrs(peer, trustedProxies)) return peer;

  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? '');
  const hops = header
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  let nearest = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeIp(stripPort(hops[i] ?? ''));
    if (hop === undefined) return undefined;
    if (!ipInCidrs(hop, trustedProxies)) return hop;
    nearest = hop;
  }
  // Every hop is a trusted proxy: the request originated inside our own infrastructure.
  return nearest;
}
