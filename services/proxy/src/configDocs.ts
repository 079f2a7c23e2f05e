import type { ConfigDocs } from '@tessera/common';

/** docs/configuration.md's text for the proxy's own variables (shared ones: @tessera/common's sharedConfigDocs). */
export const proxyConfigDocs: ConfigDocs = {
  PSP_TIMEOUT_MS: { text: "time for the PSP's complete answer (`504 psp_timeout`)" },
  PSP_CONNECT_TIMEOUT_MS: { text: 'time to connect to the PSP (`502 psp_unreachable`)' },
  PSP_DNS_TIMEOUT_MS: {
    text: "PSP host lookups go to DNS through c-ares (never libuv's thread pool): the first try's wait per name server. `/etc/hosts` is not read, except that `localhost` and `*.localhost` are `127.0.0.1`",
  },
  PSP_DNS_TRIES: { text: 'tries per name server of a PSP host lookup' },
  PSP_DNS_SERVERS: {
    default: 'empty (the name servers of `/etc/resolv.conf`)',
    text: 'CSV of name servers (`ip` or `ip:port`, `[ipv6]:port`) for PSP host names, e.g. a filtering resolver kept for the proxy; the integration tests point it at a fake DNS server',
  },
  PSP_MAX_RESPONSE_BYTES: { text: 'PSP response limit (`502 psp_response_too_large`)' },
  MERCHANT_CALL_MAX_RESPONSE_BYTES: {
    text: "the most a merchant's completion endpoint may answer to the hosted payment page's completion call (docs/api.md); a longer answer counts as an unknown outcome",
  },
  PSP_ALLOWED_CIDRS: {
    default: 'empty (`npm start`: `127.0.0.1/32`)',
    text: 'non-public ranges the proxy may reach anyway, e.g. a PSP simulator on loopback. In production an entry reaching loopback, `0.0.0.0/8`, link-local/metadata (169.254/16, fe80::/10) or a whole private block (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7; so `0.0.0.0/0` and `::/0`) stops the proxy at start (exit 78); a narrower private range (a PSP over a private link, `10.20.30.0/24`) is fine',
  },
  PSP_ALLOWED_PORTS: {
    default: "empty (`npm start`: the sandbox's port)",
    text: 'ports or ranges (`8443,9000-9010`) the proxy may send to besides 443 and 80; applies to every destination, allowed ranges included (docs/adr/0005)',
  },
  PSP_ALLOW_PRIVATE_DESTINATIONS_I_KNOW: {
    text: '`true` accepts such production `PSP_ALLOWED_CIDRS` entries anyway (logged at error level at start)',
  },
};
