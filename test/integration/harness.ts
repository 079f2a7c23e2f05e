/**
 * The integration tests' harness: real redis-server, real vault/proxy/gateway processes and a
 * recording PSP. It lives in @tessera/test-support (shared with the services' unit tests); the
 * stack itself is started by @tessera/stack, as npm start and the bench start it.
 */
export * from '@tessera/test-support';
