import { describeWriteAck, parseWriteAck } from './writeAck';

describe('parseWriteAck', () => {
  it('reads none, aof and replica:N with an optional WAIT timeout', () => {
    expect(parseWriteAck('none')).toEqual({ ok: true, ack: { kind: 'none' } });
    expect(parseWriteAck(' aof ')).toEqual({ ok: true, ack: { kind: 'aof' } });
    expect(parseWriteAck('replica:1')).toEqual({ ok: true, ack: { kind: 'replicas', replicas: 1, timeoutMs: 500 } });
    expect(parseWriteAck('replica:2:1500')).toEqual({ ok: true, ack: { kind: 'replicas', replicas: 2, timeoutMs: 1500 } });
  });

  it('refuses zero replicas, an unbounded WAIT and anything else', () => {
    for (const bad of ['replica:0', 'replica:1:0', 'replica', 'replica:x', 'fsync', '', 'replica:1:2:3']) {
      expect(parseWriteAck(bad).ok).toBe(false);
    }
  });

  it('describes a setting the way it is written', () => {
    expect(describeWriteAck({ kind: 'replicas', replicas: 2, timeoutMs: 300 })).toBe('replica:2:300');
    expect(describeWriteAck({ kind: 'aof' })).toBe('aof');
  });
});
