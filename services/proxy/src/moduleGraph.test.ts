import fs from 'node:fs';
import path from 'node:path';

/**
 * The proxy never talks to Redis, and loading ioredis cost it 6-8 MB of RSS (issue 14: every
 * service under 150 MB under load). This loads everything the proxy's entry point can reach —
 * its own modules and its dependencies — and fails if any of them pulls in ioredis.
 */
describe('proxy module graph', () => {
  it('does not load ioredis', () => {
    const loaded: string[] = [];
    jest.isolateModules(() => {
      jest.doMock('ioredis', () => {
        loaded.push('ioredis');
        return {};
      });
      const { dependencies } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      for (const dependency of Object.keys(dependencies)) require(dependency);
      // main.ts starts the server when loaded; it imports nothing beyond these modules and packages.
      for (const file of fs.readdirSync(__dirname, { recursive: true, encoding: 'utf8' })) {
        if (file.endsWith('.ts') && !file.endsWith('.test.ts') && file !== 'main.ts') require(path.join(__dirname, file));
      }
    });
    expect(loaded).toEqual([]);
  });
});
