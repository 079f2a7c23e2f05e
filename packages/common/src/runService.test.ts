import { Writable } from 'node:stream';
import { z } from 'zod';
import { createLogger } from './logger';
import { metricsEnvShape } from './metrics';
import { runService, type Closable, type Listener, type RunningService, type ServiceRuntime } from './runService';

const configSchema = z.object({ LOG_LEVEL: z.string().default('info'), ...metricsEnvShape });

/** What a fake process saw: the calls of listeners, clients and logger, in order, and how it ended. */
function fakeProcess(env: NodeJS.ProcessEnv = {}) {
  const events: string[] = [];
  const lines: Record<string, unknown>[] = [];
  let signal: ((signal: NodeJS.Signals) => void) | undefined;
  let exited: (code: number) => void = () => undefined;
  const exitCode = new Promise<number>((resolve) => (exited = resolve));
  const sink = Object.assign(
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          lines.push(parsed);
          events.push(`log: ${String(parsed.msg)}`);
        }
        done();
      },
    }),
    {
      flush(cb: () => void) {
        events.push('logger flushed');
        cb();
      },
    },
  );
  const stderr: string[] = [];
  const runtime: ServiceRuntime = {
    env,
    onShutdownSignal: (shutdown) => (signal = shutdown),
    exit: (code) => {
      events.push(`exit ${code}`);
      exited(code);
    },
    stderr: (line) => stderr.push(line),
    createLogger: (name, level) => createLogger(name, level, sink),
    limitHeapGrowth: () => events.push('heap growth limited'),
  };
  return {
    runtime,
    events,
    lines,
    stderr,
    exitCode,
    get signalHandled() {
      return signal !== undefined;
    },
    sendSignal(name: NodeJS.Signals = 'SIGTERM') {
      if (signal === undefined) throw new Error('no shutdown handler installed');
      signal(name);
    },
  };
}

function aListener(name: string, events: string[], drainMs: number | 'never'): Listener {
  return {
    drain() {
      events.push(`${name} draining`);
      if (drainMs === 'never') return new Promise<void>(() => undefined);
      return new Promise((resolve) =>
        setTimeout(() => {
          events.push(`${name} drained`);
          resolve();
        }, drainMs),
      );
    },
    cut: () => events.push(`${name} cut`),
  };
}

function aClient(name: string, events: string[], close: () => void | Promise<void> = () => undefined): Closable {
  return {
    name,
    close: async () => {
      await close();
      events.push(`${name} closed`);
    },
  };
}

function serving(running: RunningService) {
  return { name: 'svc', configSchema, start: async () => running };
}

describe('runService', () => {
  it('on SIGTERM drains every listener, then closes the clients in order, then logs stopped and flushes the logger, then exits 0', async () => {
    const proc = fakeProcess();
    const { events } = proc;
    await runService(
      serving({
        listeners: [aListener('grpc', events, 30), aListener('admin', events, 5)],
        clients: [aClient('vault client', events), aClient('redis', events, () => new Promise((r) => setTimeout(r, 10)))],
        listening: { address: '127.0.0.1:5000' },
      }),
      proc.runtime,
    );
    expect(proc.lines.find((line) => line.msg === 'svc listening')).toMatchObject({ address: '127.0.0.1:5000' });

    proc.sendSignal();
    expect(await proc.exitCode).toBe(0);
    expect(events).toEqual([
      'heap growth limited',
      'log: svc listening',
      'log: svc shutting down',
      'grpc draining',
      'admin draining',
      'admin drained',
      'grpc drained',
      'vault client closed',
      'redis closed',
      'log: svc stopped',
      'logger flushed',
      'exit 0',
    ]);
  });

  it('cuts a listener that is still draining at the grace deadline, then goes on with the clients', async () => {
    const proc = fakeProcess();
    const { events } = proc;
    await runService(
      serving({
        listeners: [aListener('stuck', events, 'never'), aListener('quick', events, 1)],
        clients: [aClient('egress', events)],
        listening: {},
        drainGraceMs: 100,
      }),
      proc.runtime,
    );
    const started = Date.now();
    proc.sendSignal();
    expect(await proc.exitCode).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(events.slice(events.indexOf('stuck draining'))).toEqual([
      'stuck draining',
      'quick draining',
      'quick drained',
      'log: svc: work still in flight at the drain deadline is cut',
      'stuck cut',
      'egress closed',
      'log: svc stopped',
      'logger flushed',
      'exit 0',
    ]);
  });

  it('closes the remaining clients after one fails to close, and exits 1', async () => {
    const proc = fakeProcess();
    const { events } = proc;
    await runService(
      serving({
        listeners: [aListener('grpc', events, 1)],
        clients: [
          aClient('egress', events, () => {
            throw new Error('socket hang up');
          }),
          aClient('vault client', events),
        ],
        listening: {},
      }),
      proc.runtime,
    );
    proc.sendSignal();
    expect(await proc.exitCode).toBe(1);
    expect(proc.lines.find((line) => line.msg === 'closing a client failed')).toMatchObject({ client: 'egress' });
    expect(events.slice(events.indexOf('grpc drained'))).toEqual([
      'grpc drained',
      'log: closing a client failed',
      'vault client closed',
      'log: svc stopped',
      'logger flushed',
      'exit 1',
    ]);
  });

  it('writes one stderr line and exits 1 when start-up fails, without serving or waiting for a signal', async () => {
    const proc = fakeProcess();
    await runService(
      {
        name: 'svc',
        configSchema,
        start: () => Promise.reject(new Error('bind 127.0.0.1:5000: address in use')),
      },
      proc.runtime,
    );
    expect(await proc.exitCode).toBe(1);
    expect(proc.stderr).toEqual(['[svc] failed to start: bind 127.0.0.1:5000: address in use\n']);
    expect(proc.signalHandled).toBe(false);
    expect(proc.events).not.toContain('log: svc listening');
  });

  it('leaves the process alone when start-up hands its life to something else (a cluster primary)', async () => {
    const proc = fakeProcess();
    await runService({ name: 'svc', configSchema, start: async () => undefined }, proc.runtime);
    expect(proc.signalHandled).toBe(false);
    expect(proc.events).toEqual(['heap growth limited']);
  });

  it('serves /metrics on METRICS_PORT while the listeners drain, and closes it before the clients', async () => {
    const proc = fakeProcess({ METRICS_PORT: '0' });
    const { events } = proc;
    let scrapeDuringDrain: number | undefined;
    let metricsUrl = '';
    const slowListener: Listener = {
      drain: async () => {
        scrapeDuringDrain = (await fetch(metricsUrl)).status;
      },
      cut: () => undefined,
    };
    const client = aClient('redis', events, async () => {
      await expect(fetch(metricsUrl)).rejects.toThrow();
    });
    await runService(serving({ listeners: [slowListener], clients: [client], listening: {} }), proc.runtime);
    metricsUrl = String(proc.lines.find((line) => line.msg === 'metrics listening')?.url);
    expect(events.indexOf('log: metrics listening')).toBeLessThan(events.indexOf('log: svc listening'));
    proc.sendSignal();
    expect(await proc.exitCode).toBe(0);
    expect(scrapeDuringDrain).toBe(200);
    expect(events).toContain('redis closed');
  });
});
