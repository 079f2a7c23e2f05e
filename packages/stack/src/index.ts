export { ManagedProcess, ROOT, type ManagedProcessOptions } from './managedProcess';
export { ownEnvironment, PROCESS_BASICS } from './ownEnvironment';
export {
  redisReady,
  startRedisServer,
  type RedisAclOptions,
  type RedisServerOptions,
  type RedisServerProcess,
  type RedisUser,
} from './redisServer';
export { type EdgeServiceName, grpcTargetOf, ServiceStack, type ServiceName, type ServiceStackOptions } from './serviceStack';
export { httpOk, PortBlock, tcpOpen, waitFor } from './wait';
export { redisServerOf, startLocalRedis, type LocalRedisOptions } from './localRedis';
