import type { ResolvedAddress } from './resolver';

/**
 * The DNS answers the pre-flight judged, held per host name while their requests are in flight,
 * so the connector connects to exactly the addresses that were checked instead of asking DNS
 * again. A second lookup could answer differently (DNS rebinding, or just a round-robin with a
 * short TTL); judged again at connect time, a changed answer would refuse a request whose card
 * data the vault had already rendered, using up its one-time CVV.
 *
 * Requests for the same host may hold different answers at once; the connector gets the latest.
 * Every answer held passed the policy, so whichever a new connection uses is one that was checked.
 */
export interface AddressPins {
  /** Holds `addresses` for `hostname` until the returned release is called (once). */
  hold(hostname: string, addresses: readonly ResolvedAddress[]): () => void;
  /** The answer held for `hostname`, or undefined when no request holds one. */
  get(hostname: string): readonly ResolvedAddress[] | undefined;
}

export function createAddressPins(): AddressPins {
  const pins = new Map<string, { addresses: readonly ResolvedAddress[]; holders: number }>();
  return {
    hold(hostname, addresses) {
      const pin = pins.get(hostname);
      if (pin === undefined) pins.set(hostname, { addresses, holders: 1 });
      else {
        pin.addresses = addresses;
        pin.holders += 1;
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const held = pins.get(hostname);
        if (held === undefined) return;
        held.holders -= 1;
        if (held.holders === 0) pins.delete(hostname);
      };
    },
    get: (hostname) => pins.get(hostname)?.addresses,
  };
}
