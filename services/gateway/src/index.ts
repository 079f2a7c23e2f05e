export { gatewayConfigSchema, parseGatewayConfig, resolveApiKeyPepper, type GatewayConfig } from './config';
export { createApp, type GatewayDeps } from './transport/app';
export { vaultApiFromClient, proxyApiFromClient } from './transport/upstreams';
export type { VaultApi, ProxyApi, CallContext } from './app/ports';
export type { ApiKeyStore } from '@tessera/merchant-data';
export { createRedisClient } from '@tessera/common/redis';
export { RedisApiKeyStore } from '@tessera/merchant-data';
export { issueApiKey, buildApiKeyRecord, hashApiKey, generateApiKey, type ApiKeyRecord } from '@tessera/merchant-data';
