import { isLoopbackAddress } from './tls';

describe('isLoopbackAddress (where plaintext gRPC may bind)', () => {
  it.each(['127.0.0.1:50051', '127.1.2.3:0', '[::1]:50051', '[0:0:0:0:0:0:0:1]:1', 'localhost:50051', 'LOCALHOST:1'])(
    'accepts the loopback literal or localhost %s',
    (address) => {
      expect(isLoopbackAddress(address)).toBe(true);
    },
  );

  it.each([
    '127.0.0.1.nip.io:50051',
    '127.attacker.example:50051',
    '127.0.0.1.evil.example:50051',
    '127.1:50051',
    'localhost.evil.example:50051',
    '0.0.0.0:50051',
    '[::]:50051',
    '10.0.0.5:50051',
    'vault:50051',
  ])('refuses %s: a host name is not loopback because of how it is spelled', (address) => {
    expect(isLoopbackAddress(address)).toBe(false);
  });
});
