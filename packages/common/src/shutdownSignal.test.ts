import { onShutdownSignal } from './shutdownSignal';

describe('onShutdownSignal', () => {
  const before = { SIGTERM: process.listeners('SIGTERM'), SIGINT: process.listeners('SIGINT') };
  afterEach(() => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      for (const listener of process.listeners(signal)) if (!before[signal].includes(listener)) process.off(signal, listener);
    }
  });

  it('shuts down once, on the first of SIGTERM and SIGINT, however many follow', () => {
    const calls: string[] = [];
    onShutdownSignal((signal) => calls.push(signal));
    process.emit('SIGINT');
    process.emit('SIGTERM');
    process.emit('SIGINT');
    expect(calls).toEqual(['SIGINT']);
  });
});
