import { EventEmitter } from 'node:events';
import type { PspCancellation } from '../egress/pspEgress';
import { relayStreamedAnswer, type AnswerStream } from './relayStreamedAnswer';

/** A caller's stream with room for `room` messages until the test makes more (then 'drain'). */
class FakeCall extends EventEmitter implements AnswerStream {
  readonly written: unknown[] = [];
  constructor(public room: number) {
    super();
  }
  write(message: unknown): boolean {
    this.written.push(message);
    this.room -= 1;
    return this.room > 0;
  }
  makeRoom(room: number): void {
    this.room = room;
    this.emit('drain');
  }
}

/** A body that records which chunks were asked for, and whether it was let go. */
function recordedBody(count: number) {
  const state = { pulled: [] as number[], closed: false };
  async function* body(): AsyncGenerator<Buffer> {
    try {
      for (let i = 0; i < count; i++) {
        state.pulled.push(i);
        yield Buffer.from(`c${i}`);
      }
    } finally {
      state.closed = true;
    }
  }
  return { state, body: body() };
}

const turns = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('relayStreamedAnswer', () => {
  it('writes the head, then each chunk, asking for the next only when the caller’s stream has room', async () => {
    const call = new FakeCall(2);
    const { state, body } = recordedBody(4);
    const relayed = relayStreamedAnswer(call, { status: 200, headers: [{ name: 'x-a', value: '1' }], body }, { cancelled: false });
    await turns();
    expect(call.written).toEqual([{ head: { status: 200, headers: [{ name: 'x-a', value: '1' }] } }, { chunk: Buffer.from('c0') }]);
    expect(state.pulled).toEqual([0]);
    call.makeRoom(10);
    await relayed;
    expect(call.written.slice(1)).toEqual(['c0', 'c1', 'c2', 'c3'].map((c) => ({ chunk: Buffer.from(c) })));
    expect(state.closed).toBe(true);
  });

  it('lets go of the body when the caller goes while it waits for room, writing nothing more', async () => {
    const call = new FakeCall(1);
    const cancellation: PspCancellation = { cancelled: false };
    const { state, body } = recordedBody(4);
    const relayed = relayStreamedAnswer(call, { status: 200, headers: [], body }, cancellation);
    await turns();
    expect(call.written).toHaveLength(2);
    cancellation.cancelled = true;
    call.emit('cancelled');
    await relayed;
    expect(call.written).toHaveLength(2);
    expect(state).toEqual({ pulled: [0], closed: true });
    expect(call.listenerCount('drain')).toBe(0);
  });

  it('writes nothing for a caller that has already gone', async () => {
    const call = new FakeCall(10);
    const { body } = recordedBody(2);
    await relayStreamedAnswer(call, { status: 200, headers: [], body }, { cancelled: true });
    expect(call.written).toEqual([]);
  });
});
