/** For the integration harness and tools; the service itself starts from main.ts. */
export { configSchema, type VaultConfig } from './config';
export { Vault, type VaultOptions } from './app/vault';
export { parseKeyRing, generateKeyRingEntry, type KeyRing } from './domain/keyRing';
export { renderPspBody, encodingForContentType, PLACEHOLDERS } from './domain/renderPspBody';
export { isTokenShaped } from './domain/token';
export type { CardStore } from './store/cardStore';
export { RedisCardStore } from './store/redisCardStore';
export { createVaultHandlers } from './transport/grpcHandlers';
export { startVaultServer } from './transport/server';
