import { isTestCard, type KeyMode } from '@tessera/common';

/**
 * The caller's key mode as it arrives on the wire. Anything but "test" or "live" (an older
 * caller sends "") is no mode at all: it matches no token, rather than defaulting to either.
 */
export function keyModeOf(value: string): KeyMode | undefined {
  return value === 'test' || value === 'live' ? value : undefined;
}

/**
 * The mode of a token written before tokens recorded one. Keys have always been held to the
 * card rules (test keys take only the published test cards, live keys refuse them), so the card
 * itself says which kind of key created it.
 */
export function modeOfLegacyCard(number: string): KeyMode {
  return isTestCard(number) ? 'test' : 'live';
}
