/**
 * Integration tests call the services with fetch, and the harness's CLI helpers (createKey,
 * revokeKey, createOperator, ...) block the event loop with spawnSync. A keep-alive connection
 * reused after such a pause can be closed by the server's idle timeout just as the next request
 * is written ("other side closed"): a flake of the tests, not of the services. An idle one also
 * holds up a gateway's graceful stop (it drains until its last connection is gone) until the
 * client drops it, about 4 s later. So every fetch in an integration test opens its own
 * connection. Tests of keep-alive behaviour (gatewayDrain) use node:http agents of their own.
 */
import { Agent, setGlobalDispatcher } from 'undici';

// npm undici's fetch reads the dispatcher from this (the test file's) realm.
setGlobalDispatcher(new Agent({ pipelining: 0 }));

// Jest runs a test file in a vm context of its own, but the fetch it hands in is Node's built-in
// one, which reads its dispatcher from the outer realm's global. That one gets an Agent of
// Node's own undici (npm undici's Agent there trips its parser's assertions).
const DISPATCHER = Symbol.for('undici.globalDispatcher.1');
const outerGlobal = (fetch.constructor as FunctionConstructor)('return globalThis')() as Record<symbol, unknown>;
const builtIn = outerGlobal[DISPATCHER] as { constructor: new (options: { pipelining: number }) => unknown } | undefined;
// Node sets its default dispatcher when it loads fetch, which Jest did to hand it in; should a
// Node version not have, fetch keeps its default (keep-alive): slower stops, the same results.
if (builtIn !== undefined) outerGlobal[DISPATCHER] = new builtIn.constructor({ pipelining: 0 });
