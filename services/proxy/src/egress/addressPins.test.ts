import { createAddressPins } from './addressPins';

const A = [{ address: '93.184.216.34', family: 4 as const }];
const B = [{ address: '2606:2800:220:1::1', family: 6 as const }];

describe('address pins (the pre-flight answers held while their requests run)', () => {
  it('gives the latest answer held for a host, until the last holder releases it', () => {
    const pins = createAddressPins();
    expect(pins.get('psp.example')).toBeUndefined();
    const releaseA = pins.hold('psp.example', A);
    const releaseB = pins.hold('psp.example', B);
    expect(pins.get('psp.example')).toBe(B);
    expect(pins.get('other.example')).toBeUndefined();
    releaseB();
    expect(pins.get('psp.example')).toBe(B);
    releaseA();
    expect(pins.get('psp.example')).toBeUndefined();
  });

  it('counts a release once, however often it is called', () => {
    const pins = createAddressPins();
    const releaseA = pins.hold('psp.example', A);
    pins.hold('psp.example', B);
    releaseA();
    releaseA();
    expect(pins.get('psp.example')).toBe(B);
  });
});
