/**
 * Integration tests call the services with fetch, and the harness's CLI helpers (createKey,
 * revokeKey, createOperator, ...) block the event loop with spawnSync. A keep-alive connection
 * reused after such a pause can be closed by the server's idle timeout just as the next request
 * is written ("other side closed"): a flake of the tests, not of the services. So every fetch in
 * an integration test opens its own connection. npm undici and Node's built-in fetch share the
 * global dispatcher. Tests of keep-alive behaviour (gatewayDrain) use node:http agents of their own.
 */
import { Agent, setGlobalDispatcher } from 'undici';

setGlobalDispatcher(new Agent({ pipelining: 0 }));
