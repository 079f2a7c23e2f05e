import { createBatcher } from './batching';

describe('createBatcher', () => {
  it('splits the calls of one turn by count and by weight; a lone or too heavy item goes alone', async () => {
    const calls: string[] = [];
    const call = createBatcher<string, string>({
      maxBatch: 3,
      maxBatchBytes: 10,
      weigh: (item) => item.length,
      sendOne: async (item) => {
        calls.push(`one ${item}`);
        return item;
      },
      sendBatch: async (items, deliver) => {
        calls.push(`batch ${items.join(',')}`);
        items.forEach((item, i) => deliver(i, item));
      },
      failed: (err) => Promise.reject(err),
    });
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'eeeeeeeeeeee', 'fffff', 'ggggg', 'h'].map(call));
    expect(answers).toEqual(['a', 'b', 'c', 'd', 'eeeeeeeeeeee', 'fffff', 'ggggg', 'h']);
    expect(calls).toEqual(['batch a,b,c', 'one d', 'one eeeeeeeeeeee', 'batch fffff,ggggg', 'one h']);
  });
});
