import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';

export interface FakeDns {
  /** `127.0.0.1:port`, as PSP_DNS_SERVERS and createDnsResolver's `servers` take it. */
  server: string;
  /** Every question asked, in order: `name A`, `name AAAA`. */
  questions: string[];
  close(): Promise<void>;
}

/**
 * A DNS server on loopback UDP: each A question gets `answerA(name)` (a dotted IPv4 address;
 * undefined: no data), AAAA questions no data; `silent` answers nothing at all (a DNS server that
 * is down or filtered). Answers carry TTL 0, as a rebinding attacker's do, so c-ares (which caches
 * by TTL) asks again on every lookup.
 */
export async function startFakeDns(answerA: (name: string) => string | undefined, options: { silent?: boolean } = {}): Promise<FakeDns> {
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
    const name = labels.join('.');
    questions.push(`${name} ${type === 1 ? 'A' : type === 28 ? 'AAAA' : type}`);
    if (options.silent) return;
    const address = type === 1 ? answerA(name) : undefined;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0); // id
    header.writeUInt16BE(0x8180, 2); // response, recursion desired and available, no error
    header.writeUInt16BE(1, 4); // one question
    header.writeUInt16BE(address === undefined ? 0 : 1, 6); // answers
    const answers =
      address === undefined ? [] : [Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, ...address.split('.').map(Number)])];
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return { server: `127.0.0.1:${port}`, questions, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}
