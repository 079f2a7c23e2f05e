/**
 * Client-side load balancing between replicas: round_robin over every address the target resolves
 * to, skipping replicas whose grpc.health.v1 Watch says NOT_SERVING.
 *
 * grpc-js (1.14) has round_robin but not the service config's `healthCheckConfig` (client-side
 * health checking, gRFC A17): it parses no such field and opens no Watch. What it does have is the
 * hook outlier detection uses: a policy may wrap each subchannel and mark it unhealthy, and the
 * pick_first leaves under round_robin then leave it out of the rotation. This policy is that
 * wrapper around the stock round_robin, with the Watch stream of A17 as the source of health.
 *
 * One rule differs from A17 on purpose: when no connected replica is SERVING, every connected one
 * is used (the "panic" rule of Envoy and others). A shared Redis outage makes every vault
 * NOT_SERVING at once; sending the call anyway gets the vault's own precise error back
 * (service_unavailable with its detail) instead of an anonymous "no healthy upstream".
 *
 * One addition: a replica that does not answer at all (a hung process, SIGSTOP, a stalled node)
 * keeps its connection open and says nothing on its Watch stream, so neither the connection state
 * nor the health it last reported changes, and keepalive notices only after 40 s. With liveness
 * options (livenessChannelOptions) each connected replica is also asked a health Check every
 * interval; one that gets no answer within the timeout is hung, and gets no calls, not even under
 * the panic rule, until a Check is answered again. When every replica is hung the channel reports
 * TRANSIENT_FAILURE, so calls fail at once with UNAVAILABLE (nothing sent) instead of each waiting
 * for its deadline.
 */
import * as grpc from '@grpc/grpc-js';
import { experimental } from '@grpc/grpc-js';
import type { HealthCheckResponse__Output } from './health';
import { createHealthClient } from './health';

export const HEALTH_CHECKED_ROUND_ROBIN = 'tessera_health_checked_round_robin';

/** After a Watch failed on a connection that is still up, wait this long before asking again. */
const WATCH_RETRY_MS = 1_000;

const LIVENESS_INTERVAL_OPTION = 'tessera.liveness_interval_ms';
const LIVENESS_TIMEOUT_OPTION = 'tessera.liveness_timeout_ms';

/** How often a connected replica is asked whether it answers at all, and how long it may take. */
export interface Liveness {
  livenessIntervalMs: number;
  livenessTimeoutMs: number;
}

/** Channel options that switch liveness probing on for a balanced channel (clientChannelOptions adds them). */
export function livenessChannelOptions(liveness: Liveness): grpc.ChannelOptions {
  return { [LIVENESS_INTERVAL_OPTION]: liveness.livenessIntervalMs, [LIVENESS_TIMEOUT_OPTION]: liveness.livenessTimeoutMs };
}

function livenessOf(options: grpc.ChannelOptions): Liveness | undefined {
  const livenessIntervalMs: unknown = options[LIVENESS_INTERVAL_OPTION];
  const livenessTimeoutMs: unknown = options[LIVENESS_TIMEOUT_OPTION];
  if (typeof livenessIntervalMs !== 'number' || typeof livenessTimeoutMs !== 'number') return undefined;
  return { livenessIntervalMs, livenessTimeoutMs };
}

class HealthCheckedRoundRobinConfig implements experimental.TypedLoadBalancingConfig {
  constructor(readonly serviceName: string) {}

  getLoadBalancerName(): string {
    return HEALTH_CHECKED_ROUND_ROBIN;
  }

  toJsonObject(): object {
    return { [HEALTH_CHECKED_ROUND_ROBIN]: { serviceName: this.serviceName } };
  }

  static createFromJson(obj: unknown): HealthCheckedRoundRobinConfig {
    const serviceName = (obj as { serviceName?: unknown } | null)?.serviceName ?? '';
    if (typeof serviceName !== 'string') throw new Error(`${HEALTH_CHECKED_ROUND_ROBIN}: serviceName must be a string`);
    return new HealthCheckedRoundRobinConfig(serviceName);
  }
}

/**
 * One replica's connection, with the health its server last reported. `serving` is what the
 * server said; whether calls may go here (isHealthy) is decided by the policy's panic rule.
 */
class HealthWatchedSubchannel extends experimental.BaseSubchannelWrapper {
  serving = false;
  /** Connected, but its last liveness Check got no answer in time. */
  hung = false;
  private call: grpc.ClientReadableStream<HealthCheckResponse__Output> | undefined;
  private probe: grpc.ClientUnaryCall | undefined;
  private nextProbe: NodeJS.Timeout | undefined;
  private client: ReturnType<typeof createHealthClient> | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** The server has no Watch (an older version mid-upgrade): treated as always serving, as A17 says. */
  private unsupported = false;
  private readonly onState: experimental.ConnectivityStateListener;

  constructor(
    child: experimental.SubchannelInterface,
    private readonly serviceName: string,
    private readonly liveness: Liveness | undefined,
    private readonly changed: () => void,
    private readonly released: (self: HealthWatchedSubchannel) => void,
  ) {
    super(child);
    this.onState = (_subchannel, _previous, state) => {
      if (state === grpc.connectivityState.READY) this.watch();
      else this.stopWatch();
      this.changed();
    };
    child.addConnectivityStateListener(this.onState);
    if (child.getConnectivityState() === grpc.connectivityState.READY) this.watch();
  }

  /** A connection is up: follow the health its server reports, and (with liveness options) whether it answers at all. */
  private watch(): void {
    this.startWatch();
    if (this.liveness && this.probe === undefined && this.nextProbe === undefined)
      this.scheduleProbe(this.liveness, this.liveness.livenessIntervalMs);
  }

  private get healthClient(): ReturnType<typeof createHealthClient> {
    // Calls on this one connection (not on the balanced channel), as the ORCA watcher in grpc-js does.
    this.client ??= createHealthClient('unused', grpc.credentials.createInsecure(), { channelOverride: this.child.getChannel() });
    return this.client;
  }

  get connected(): boolean {
    return this.getConnectivityState() === grpc.connectivityState.READY;
  }

  getWrappedSubchannel(): experimental.SubchannelInterface {
    return this.child;
  }

  /** The policy's verdict: may calls be sent here? */
  allow(healthy: boolean): void {
    this.setHealthy(healthy);
  }

  private setServing(serving: boolean): void {
    if (serving === this.serving) return;
    this.serving = serving;
    this.changed();
  }

  private startWatch(): void {
    if (this.call !== undefined) return;
    if (this.unsupported) {
      this.setServing(true);
      return;
    }
    clearTimeout(this.retry);
    this.retry = undefined;
    // Until its server answers, a new connection is not trusted with calls, unless no replica is
    // serving (the panic rule): a replacement pod whose Redis is unreachable never gets one.
    this.setServing(false);
    const call = this.healthClient.Watch({ service: this.serviceName });
    this.call = call;
    call.on('data', (response: HealthCheckResponse__Output) => this.setServing(response.status === 'SERVING'));
    call.on('error', (err: grpc.ServiceError) => {
      if (this.call !== call) return;
      this.call = undefined;
      if (err.code === grpc.status.CANCELLED) return;
      if (err.code === grpc.status.UNIMPLEMENTED) {
        this.unsupported = true;
        this.setServing(true);
        return;
      }
      this.failed();
    });
    call.on('end', () => {
      if (this.call !== call) return;
      this.call = undefined;
      this.failed();
    });
  }

  /** The stream ended while the connection may still be up (the server is stopping): not serving, ask again later. */
  private failed(): void {
    this.setServing(false);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (this.connected) this.startWatch();
    }, WATCH_RETRY_MS);
    this.retry.unref();
  }

  private setHung(hung: boolean): void {
    if (hung === this.hung) return;
    this.hung = hung;
    this.changed();
  }

  private scheduleProbe(liveness: Liveness, afterMs: number): void {
    this.nextProbe = setTimeout(() => {
      this.nextProbe = undefined;
      if (this.connected) this.sendProbe(liveness);
    }, afterMs);
    this.nextProbe.unref();
  }

  /**
   * One liveness Check for the server as a whole (''). Any answer the server gave, whatever it
   * says (NOT_SERVING, UNIMPLEMENTED on a server without health), proves it alive; only the
   * deadline passing without one makes it hung. A broken connection proves nothing either way:
   * the connection state says that. While hung the next Check goes out at once, so the replica is
   * back in the rotation as soon as it answers.
   */
  private sendProbe(liveness: Liveness): void {
    const probe = this.healthClient.Check(
      { service: '' },
      { deadline: Date.now() + liveness.livenessTimeoutMs },
      (err: grpc.ServiceError | null) => {
        if (this.probe !== probe) return;
        this.probe = undefined;
        const unanswered = err?.code === grpc.status.DEADLINE_EXCEEDED;
        if (unanswered) this.setHung(true);
        else if (err?.code !== grpc.status.UNAVAILABLE && err?.code !== grpc.status.CANCELLED) this.setHung(false);
        this.scheduleProbe(liveness, unanswered ? 0 : liveness.livenessIntervalMs);
      },
    );
    this.probe = probe;
  }

  private stopWatch(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    const call = this.call;
    this.call = undefined;
    call?.cancel();
    clearTimeout(this.nextProbe);
    this.nextProbe = undefined;
    const probe = this.probe;
    this.probe = undefined;
    probe?.cancel();
    // Not connected: no calls go here whatever this says; the next connection asks again (its
    // handshake is the first sign of life, so it starts out not hung).
    this.serving = false;
    this.hung = false;
  }

  protected override destroy(): void {
    this.child.removeConnectivityStateListener(this.onState);
    this.stopWatch();
    // The client is not closed: its channel is the subchannel's own, which grpc-js caches and shares.
    this.released(this);
    super.destroy();
  }
}

/** Hands the stock round_robin's picks back unwrapped, as every wrapping policy must. */
class UnwrappingPicker implements experimental.Picker {
  constructor(private readonly picker: experimental.Picker) {}

  pick(args: experimental.PickArgs): experimental.PickResult {
    const result = this.picker.pick(args);
    if (result.subchannel instanceof HealthWatchedSubchannel) return { ...result, subchannel: result.subchannel.getWrappedSubchannel() };
    return result;
  }
}

const ROUND_ROBIN = experimental.parseLoadBalancingConfig({ round_robin: {} });

class HealthCheckedRoundRobin implements experimental.LoadBalancer {
  private readonly subchannels = new Set<HealthWatchedSubchannel>();
  private readonly child: experimental.ChildLoadBalancerHandler;
  private serviceName = '';
  private liveness: Liveness | undefined;

  constructor(helper: experimental.ChannelControlHelper) {
    this.child = new experimental.ChildLoadBalancerHandler(
      experimental.createChildChannelControlHelper(helper, {
        createSubchannel: (address, args) => {
          const wrapped = new HealthWatchedSubchannel(
            helper.createSubchannel(address, args),
            this.serviceName,
            this.liveness,
            () => this.applyPanicRule(),
            (self) => {
              this.subchannels.delete(self);
              this.applyPanicRule();
            },
          );
          this.subchannels.add(wrapped);
          return wrapped;
        },
        updateState: (state, picker, errorMessage) => helper.updateState(state, new UnwrappingPicker(picker), errorMessage),
      }),
    );
  }

  /** Serving replicas only; all connected ones that answer when none is serving; never a hung one (see the file comment). */
  private applyPanicRule(): void {
    const answering = [...this.subchannels].filter((s) => s.connected && !s.hung);
    const anyServing = answering.some((s) => s.serving);
    for (const s of this.subchannels) s.allow(!s.hung && (s.serving || !anyServing));
  }

  updateAddressList(
    endpoints: Parameters<experimental.LoadBalancer['updateAddressList']>[0],
    config: experimental.TypedLoadBalancingConfig,
    options: grpc.ChannelOptions,
    resolutionNote: string,
  ): boolean {
    if (!(config instanceof HealthCheckedRoundRobinConfig)) return false;
    this.serviceName = config.serviceName;
    this.liveness = livenessOf(options);
    return this.child.updateAddressList(endpoints, ROUND_ROBIN, options, resolutionNote);
  }

  exitIdle(): void {
    this.child.exitIdle();
  }

  resetBackoff(): void {
    this.child.resetBackoff();
  }

  destroy(): void {
    this.child.destroy();
  }

  getTypeName(): string {
    return HEALTH_CHECKED_ROUND_ROBIN;
  }
}

let registered = false;

/**
 * Channel options that balance a client over every replica its target resolves to (`dns:///host:port`
 * or a bare `host:port`: every A/AAAA record; `ipv4:a:p,b:q`: the list), health-checked through
 * grpc.health.v1 Watch for `serviceName`.
 */
export function balancedChannelOptions(serviceName: string): grpc.ChannelOptions {
  if (!registered) {
    experimental.registerLoadBalancerType(HEALTH_CHECKED_ROUND_ROBIN, HealthCheckedRoundRobin, HealthCheckedRoundRobinConfig);
    registered = true;
  }
  return {
    'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ [HEALTH_CHECKED_ROUND_ROBIN]: { serviceName } }] }),
    // Ours is the only service config: a DNS TXT record must not switch balancing off.
    'grpc.service_config_disable_resolution': 1,
  };
}
