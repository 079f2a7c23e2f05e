/**
 * Integration tests call the services with fetch, and the harness's CLI helpers (createKey,
 * revokeKey, createOperator, ...) block the event loop with spawnSync. A keep-alive connection
 * reused after such a pause can be closed by the server's idle timeout just as the next request
 * is written ("other side closed"): a flake of the tests, not of the services. An idle one also
 * holds up every gateway's graceful stop (it drains until its last connection is gone) until the
 * client drops it, about 4 s later. So every fetch in an integration test opens its own
 * connection. Tests of keep-alive behaviour (gatewayDrain) use node:http agents of their own.
 */
import { Agent, setGlobalDispatcher } from 'undici';

const noKeepAlive = new Agent({ pipelining: 0 });
// npm undici's fetch reads the dispatcher from this (the test file's) realm.
setGlobalDispatcher(noKeepAlive);
// Jest runs a test file in a vm context of its own, but the fetch it hands in is Node's built-in
// one from the outer realm, which reads the dispatcher from that realm's global: set it there too.
const outerGlobal = (fetch.constructor as FunctionConstructor)('return globalThis')() as Record<symbol, unknown>;
outerGlobal[Symbol.for('undici.globalDispatcher.1')] = noKeepAlive;
