export { gatewayConfigSchema, parseGatewayConfig, resolveApiKeyPepper, type GatewayConfig } from './config';
export { createApp, type GatewayDeps } from './transport/app';
export {
  vaultApiFromClient,
  proxyApiFromClient,
  type VaultApi,
  type ProxyApi,
  type CallContext,
  type ReadyResult,
} from './transport/upstreams';
export type { ApiKeyStore } from './store/apiKeyStore';
export { createRedisClient } from '@tessera/common/redis';
export { RedisApiKeyStore } from './store/redisApiKeyStore';
export { issueApiKey, buildApiKeyRecord, hashApiKey, generateApiKey, type ApiKeyRecord } from './domain/apiKeys';
