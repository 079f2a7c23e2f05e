import { ConfigError, parseConfig as parseEnv } from '@tessera/common';
import { configSchema } from './config';

/** These tests read development defaults unless they set NODE_ENV: unset means production (see the last tests). */
const parseConfig: typeof parseEnv = (schema, env) => parseEnv(schema, { NODE_ENV: 'development', ...env });

describe('proxy config', () => {
  it('uses the documented defaults, with no non-public PSP ranges allowed', () => {
    const config = parseConfig(configSchema, {});
    expect(config).toMatchObject({
      PROXY_ADDR: '127.0.0.1:50052',
      VAULT_ADDR: '127.0.0.1:50051',
      VAULT_TIMEOUT_MS: 2000,
      PSP_TIMEOUT_MS: 30000,
      PSP_CONNECT_TIMEOUT_MS: 5000,
      PSP_MAX_RESPONSE_BYTES: 10485760,
    });
    expect(config.PSP_ALLOWED_CIDRS).toEqual([]);
  });

  it('names no inbound identity unless TLS_PEER_INBOUND is set (empty counts as unset)', () => {
    expect(parseConfig(configSchema, {}).TLS_PEER_INBOUND).toBeUndefined();
    expect(parseConfig(configSchema, { TLS_PEER_INBOUND: '' }).TLS_PEER_INBOUND).toBeUndefined();
    expect(parseConfig(configSchema, { TLS_PEER_INBOUND: 'inbound' }).TLS_PEER_INBOUND).toBe('inbound');
  });

  it('parses PSP_ALLOWED_CIDRS as a comma-separated list of IPv4 and IPv6 CIDRs', () => {
    const config = parseConfig(configSchema, { PSP_ALLOWED_CIDRS: '127.0.0.1/32, ::1/128' });
    expect(config.PSP_ALLOWED_CIDRS.map(({ address, bits }) => `${address.toString()}/${bits}`)).toEqual(['127.0.0.1/32', '::1/128']);
  });

  it('rejects a malformed CIDR at start-up, naming the variable', () => {
    expect(() => parseConfig(configSchema, { PSP_ALLOWED_CIDRS: '127.0.0.1/32,localhost' })).toThrow(ConfigError);
    expect(() => parseConfig(configSchema, { PSP_ALLOWED_CIDRS: '10.0.0.0/33' })).toThrow(/PSP_ALLOWED_CIDRS/);
  });

  it('allows no extra PSP ports by default, and parses PSP_ALLOWED_PORTS as ports and ranges', () => {
    expect(parseConfig(configSchema, {}).PSP_ALLOWED_PORTS).toEqual([]);
    expect(parseConfig(configSchema, { PSP_ALLOWED_PORTS: '8090, 9000-9010' }).PSP_ALLOWED_PORTS).toEqual([
      { from: 8090, to: 8090 },
      { from: 9000, to: 9010 },
    ]);
    expect(() => parseConfig(configSchema, { PSP_ALLOWED_PORTS: '8090,70000' })).toThrow(/PSP_ALLOWED_PORTS/);
  });

  it('asks the name servers of /etc/resolv.conf by default, and PSP_DNS_SERVERS when set', () => {
    expect(parseConfig(configSchema, {}).PSP_DNS_SERVERS).toEqual([]);
    expect(parseConfig(configSchema, { PSP_DNS_SERVERS: '10.0.0.53, 127.0.0.1:5353, [::1]:53' }).PSP_DNS_SERVERS).toEqual([
      '10.0.0.53',
      '127.0.0.1:5353',
      '[::1]:53',
    ]);
    expect(() => parseConfig(configSchema, { PSP_DNS_SERVERS: 'dns.example' })).toThrow(/PSP_DNS_SERVERS/);
  });

  it('dials VAULT_ADDR as a gRPC target over every vault replica, but listens on PROXY_ADDR as host:port', () => {
    const config = parseConfig(configSchema, { VAULT_ADDR: 'dns:///vault-headless.tessera.svc.cluster.local:50051' });
    expect(config.VAULT_ADDR).toBe('dns:///vault-headless.tessera.svc.cluster.local:50051');
    expect(parseConfig(configSchema, { VAULT_ADDR: 'ipv4:10.0.0.5:50051,10.0.0.6:50051' }).VAULT_ADDR).toContain(',');
    expect(() => parseConfig(configSchema, { VAULT_ADDR: 'ipv4:vault:50051' })).toThrow(/VAULT_ADDR/);
    expect(() => parseConfig(configSchema, { PROXY_ADDR: 'dns:///0.0.0.0:50052' })).toThrow(/PROXY_ADDR/);
    expect(config).toMatchObject({ GRPC_KEEPALIVE_TIME_MS: 30000, GRPC_MAX_CONNECTION_AGE_MS: 300000, HEALTH_POLL_INTERVAL_MS: 500 });
  });

  it('rejects non-numeric timeouts', () => {
    expect(() => parseConfig(configSchema, { PSP_TIMEOUT_MS: 'soon' })).toThrow(/PSP_TIMEOUT_MS/);
  });

  it('treats an unset NODE_ENV as production: TLS is required', () => {
    const config = parseEnv(configSchema, { NODE_ENV: 'development' });
    expect(config.NODE_ENV).toBe('development');
    expect(() => parseEnv(configSchema, {})).toThrow(/TLS_CA_FILE.*required when NODE_ENV=production/);
  });

  describe('PSP_ALLOWED_CIDRS in production', () => {
    const tls = { TLS_CA_FILE: 'ca.crt', TLS_CERT_FILE: 'tls.crt', TLS_KEY_FILE: 'tls.key' };
    const production = (cidrs: string, extra: NodeJS.ProcessEnv = {}) =>
      parseEnv(configSchema, { NODE_ENV: 'production', ...tls, PSP_ALLOWED_CIDRS: cidrs, ...extra });

    it.each(['0.0.0.0/0', '::/0', '127.0.0.1/32', '169.254.169.254/32', '10.0.0.0/8', '172.0.0.0/8', '::ffff:0:0/96', 'fd00:ec2::254/128'])(
      'refuses %s at start-up, naming the variable and the way out',
      (cidrs) => {
        expect(() => production(cidrs)).toThrow(/PSP_ALLOWED_CIDRS: .*refused in production .*PSP_ALLOW_PRIVATE_DESTINATIONS_I_KNOW=true/);
      },
    );

    it('accepts a PSP reached at a narrow private range, and everything with the explicit override', () => {
      expect(production('10.20.30.0/24, 192.168.7.9').PSP_ALLOWED_CIDRS).toHaveLength(2);
      expect(production('0.0.0.0/0', { PSP_ALLOW_PRIVATE_DESTINATIONS_I_KNOW: 'true' }).PSP_ALLOWED_CIDRS).toHaveLength(1);
    });

    it('leaves development and tests free to open loopback', () => {
      expect(parseConfig(configSchema, { PSP_ALLOWED_CIDRS: '127.0.0.1/32' }).PSP_ALLOWED_CIDRS).toHaveLength(1);
    });
  });
});
