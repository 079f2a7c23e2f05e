import fs from 'node:fs';
import path from 'node:path';

/**
 * The inbound service's layers as its folders show them (docs/SECURITY.md, ADR 0013): domain is pure,
 * app reaches the outside only through its ports, and nothing in it can make a connection of its
 * own to an upstream: the proxy's ForwardUpstream is its only way out.
 */
const sources = (fs.readdirSync(__dirname, { recursive: true, encoding: 'utf8' }) as string[])
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => ({
    file,
    imports: [...fs.readFileSync(path.join(__dirname, file), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!),
  }));

const importsOf = (folder: string) => sources.filter((s) => s.file.startsWith(`${folder}${path.sep}`));

describe('inbound service layers', () => {
  it('keeps the domain free of I/O and of the other layers', () => {
    expect(importsOf('domain').length).toBeGreaterThan(0);
    for (const { file, imports } of importsOf('domain')) {
      const bad = imports.filter((i) => /^node:|ioredis|express|@grpc|@tessera\/protos|\.\.\/(app|store|transport)/.test(i));
      expect({ file, bad }).toEqual({ file, bad: [] });
    }
  });

  it('lets the use cases reach the outside only through their ports', () => {
    for (const { file, imports } of importsOf('app')) {
      const bad = imports.filter((i) => /ioredis|express|@grpc|\.\.\/(store|transport)/.test(i));
      expect({ file, bad }).toEqual({ file, bad: [] });
    }
  });

  it('has no HTTP client or socket of its own: upstreams are reached through the proxy only', () => {
    for (const { file, imports } of sources) {
      const bad = imports.filter((i) => /^(node:)?(https|net|tls|dns|dgram)$|^undici|^axios|^node-fetch/.test(i));
      expect({ file, bad }).toEqual({ file, bad: [] });
    }
    const all = sources.map((s) => fs.readFileSync(path.join(__dirname, s.file), 'utf8')).join('\n');
    expect(all).not.toMatch(/\bfetch\(|http\.request\(|\.connect\(/);
  });
});
