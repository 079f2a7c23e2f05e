import { pbkdf2 } from 'node:crypto';
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { createPspEgress, closePspEgress } from './pspEgress';
import { createDnsResolver } from './resolver';

/**
 * A DNS server on loopback UDP: every A question gets `answer`, AAAA questions no data; `silent`
 * answers nothing at all (a DNS server that is down or filtered).
 */
async function fakeDns(answer: [number, number, number, number], silent = false) {
  const socket = dgram.createSocket('udp4');
  const questions: string[] = [];
  socket.on('message', (query, peer) => {
    // Header (12 bytes), then one question: labels, type (2), class (2).
    let offset = 12;
    const labels: string[] = [];
    while (query[offset] !== 0) {
      const length = query[offset]!;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += 1 + length;
    }
    const questionEnd = offset + 5;
    const type = query.readUInt16BE(offset + 1);
    questions.push(`${labels.join('.')} ${type === 1 ? 'A' : type === 28 ? 'AAAA' : type}`);
    if (silent) return;
    const isA = type === 1;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0); // id
    header.writeUInt16BE(0x8180, 2); // response, recursion desired and available, no error
    header.writeUInt16BE(1, 4); // one question
    header.writeUInt16BE(isA ? 1 : 0, 6); // answers
    const record = Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...answer]);
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...(isA ? [record] : [])]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return { server: `127.0.0.1:${port}`, questions, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

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
    const dns = await fakeDns([203, 0, 113, 7]);
    try {
      const resolve = createDnsResolver({ timeoutMs: 2000, tries: 2, servers: [dns.server] });
      await expect(resolve('psp.example')).resolves.toEqual([{ address: '203.0.113.7', family: 4 }]);
      expect(dns.questions.sort()).toEqual(['psp.example A', 'psp.example AAAA']);
    } finally {
      await dns.close();
    }
  });

  it('answers while every libuv pool thread is busy (getaddrinfo would wait behind them)', async () => {
    const dns = await fakeDns([203, 0, 113, 8]);
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
    const dns = await fakeDns([203, 0, 113, 9], true);
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
    const egress = createPspEgress({ connectTimeoutMs: 5000, timeoutMs: 5000, maxResponseBytes: 1024, allowlist: [] });
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
