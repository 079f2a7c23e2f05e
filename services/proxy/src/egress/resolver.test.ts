import { pbkdf2 } from 'node:crypto';
import { startFakeDns } from '@tessera/test-support';
import { createDestinationPolicy } from '../domain/destinationPolicy';
import { createPspEgress, closePspEgress } from './pspEgress';
import { createDnsResolver } from './resolver';

/**
 * Fills every libuv pool thread (four by default, and queues more) with slow key derivations;
 * resolves when the first of them is done, i.e. when a lookup queued behind them could start.
 */
function saturateThreadPool(): Promise<void> {
  const jobs = Array.from({ length: 8 }, () => new Promise<void>((resolve) => pbkdf2('x', 'salt', 300_000, 64, 'sha512', () => resolve())));
  return Promise.race(jobs);
}

describe('createDnsResolver (PSP host names)', () => {
  it('asks the DNS server through c-ares for both families and returns what it answered', async () => {
    const dns = await startFakeDns(() => '203.0.113.7');
    try {
      const resolve = createDnsResolver({ timeoutMs: 2000, tries: 2, servers: [dns.server] });
      await expect(resolve('psp.example')).resolves.toEqual([{ address: '203.0.113.7', family: 4 }]);
      expect(dns.questions.sort()).toEqual(['psp.example A', 'psp.example AAAA']);
    } finally {
      await dns.close();
    }
  });

  it('answers while every libuv pool thread is busy (getaddrinfo would wait behind them)', async () => {
    const dns = await startFakeDns(() => '203.0.113.8');
    try {
      const resolve = createDnsResolver({ timeoutMs: 2000, tries: 2, servers: [dns.server] });
      const order: string[] = [];
      const pool = saturateThreadPool().then(() => order.push('a pool thread free'));
      await resolve('psp.example').then(() => order.push('resolved'));
      await pool;
      expect(order).toEqual(['resolved', 'a pool thread free']);
    } finally {
      await dns.close();
    }
  });

  it('gives up on a silent DNS server after its timeout and tries, with the resolver error code', async () => {
    const dns = await startFakeDns(() => '203.0.113.9', { silent: true });
    try {
      const resolve = createDnsResolver({ timeoutMs: 200, tries: 2, servers: [dns.server] });
      await expect(resolve('psp.example')).rejects.toMatchObject({ code: 'ETIMEOUT' });
      expect(dns.questions.filter((q) => q === 'psp.example A')).toHaveLength(2);
    } finally {
      await dns.close();
    }
  });

  it('answers localhost itself (c-ares reads no /etc/hosts): 127.0.0.1', async () => {
    const resolve = createDnsResolver({ timeoutMs: 200, tries: 1, servers: ['127.0.0.1:9'] });
    await expect(resolve('localhost')).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(resolve('psp.LOCALHOST.')).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
  });
});

describe('the PSP egress', () => {
  it('resolves PSP hosts without waiting for the libuv thread pool by default', async () => {
    const egress = createPspEgress({
      policy: createDestinationPolicy({ allowedCidrs: [], allowedPorts: [] }),
      connectTimeoutMs: 5000,
      timeoutMs: 5000,
      maxResponseBytes: 1024,
    });
    try {
      const order: string[] = [];
      const pool = saturateThreadPool().then(() => order.push('a pool thread free'));
      await egress.resolve('localhost').then(() => order.push('resolved'));
      await pool;
      expect(order).toEqual(['resolved', 'a pool thread free']);
    } finally {
      await closePspEgress(egress);
    }
  });
});
