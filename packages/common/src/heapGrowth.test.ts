import { spawnSync } from 'node:child_process';
import { HEAP_GROWING_PERCENT, limitHeapGrowth } from './heapGrowth';

describe('limitHeapGrowth', () => {
  it('sets the heap growing percent when the node command line does not', () => {
    const set: string[] = [];
    expect(limitHeapGrowth(['--enable-source-maps'], (flags) => set.push(flags))).toBe(true);
    expect(set).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });

  it.each(['--heap-growing-percent=300', '--heap_growing_percent=0', '--heap-growing-percent'])("leaves the operator's %s alone", (arg) => {
    const set: string[] = [];
    expect(limitHeapGrowth(['--max-old-space-size=512', arg], (flags) => set.push(flags))).toBe(false);
    expect(set).toEqual([]);
  });

  it('is a flag this Node version knows (V8 only warns on an unknown one)', () => {
    const child = spawnSync(
      process.execPath,
      ['-e', `require('node:v8').setFlagsFromString('--heap-growing-percent=${HEAP_GROWING_PERCENT}')`],
      { encoding: 'utf8' },
    );
    expect(child.status).toBe(0);
    expect(child.stderr).toBe('');
  });
});
