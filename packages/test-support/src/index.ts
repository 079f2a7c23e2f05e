/**
 * Test code shared by the services' unit tests and the integration tests: private Redis servers
 * on per-worker port blocks, the stack (started by @tessera/stack), a recording PSP, an API
 * client, card fixtures and the log scan for card data.
 */
export { grpcTargetOf, httpOk, ManagedProcess, ROOT, waitFor } from '@tessera/stack';
export { aCard, findCardDataInLogs, TEST_AMEX_CVV, TEST_CARDS, TEST_CVV } from './cards';
export { PspRecorder, startSandboxPsp, type RecordedRequest, type RecorderReply } from './psp';
export { commandsSentDuring } from './redisCommands';
export { solveProofOfWork, type ProofOfWorkChallenge } from './proofOfWork';
export {
  clusterNodes,
  clusterStateOk,
  connectNode,
  nodeProcess,
  replicasInSync,
  restartClusterNode,
  waitUntil,
  withNode,
  type ClusterNode,
} from './clusterNodes';
export { startFakeDns, type FakeDns } from './fakeDns';
export {
  freePort,
  restartRedis,
  startRedis,
  startRedisCluster,
  startRedisServer,
  useRedisServer,
  type RedisCluster,
  type RedisClusterOptions,
  type RedisServer,
  type RedisServerHandle,
  type RedisStartOptions,
} from './redisServer';
export { useSharedStack, type SharedStackFixture } from './sharedStack';
export {
  apiClient,
  readResponse,
  Stack,
  startStack,
  useStack,
  type ApiKey,
  type StackFixture,
  type StackOptions,
  type TestResponse,
} from './stack';
