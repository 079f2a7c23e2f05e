export * from './errors';
export * from './config';
export * from './logger';
export * from './devSecrets';
export * from './localStack';
export * from './card';
export * from './net/cidr';
export * from './net/hostPatterns';
export * from './tlsConfig';
export * from './redisConnection';
export * from './writeAck';
export * from './metrics';
export * from './cli';
export * from './net/httpHeaders';
export * from './randomPool';
export * from './heapGrowth';
export * from './logThrottle';
export * from './shutdownSignal';
export * from './grpcConfig';
export * from './configDoc';
export * from './deadline';
export * from './runService';
// The Redis client and helpers are a subpath, @tessera/common/redis, so that the proxy, which never
// talks to Redis, does not load ioredis (6-8 MB of its RSS) through this index.
