import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startApp, type RunningApp } from '../../testing/http';
import { loadCardFieldsAssets, type CardFieldsAssets } from './cardFieldsPage';
import { createFieldsApp, type FrameKeyLookup } from './fieldsApp';

const KEY = `tpk_test_${'a'.repeat(38)}`;
const SHOP = 'https://shop.example';

function assetsDir(fieldsJs = 'console.log("fields")'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-fields-'));
  fs.writeFileSync(path.join(dir, 'fields.js'), fieldsJs);
  fs.writeFileSync(path.join(dir, 'hosted.js'), 'console.log("hosted")');
  fs.writeFileSync(path.join(dir, 'tessera.js'), 'window.Tessera = function () {};');
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ 'tessera.js': { integrity: 'sha384-x' } }));
  return dir;
}

describe('fields origin', () => {
  let assets: CardFieldsAssets;
  let running: RunningApp;
  let lookup: FrameKeyLookup;

  beforeAll(async () => {
    assets = loadCardFieldsAssets(assetsDir());
    running = await startApp(
      createFieldsApp({ assets, apiOrigin: 'https://api.example', lookupKey: (key) => lookup(key), logger: pino({ level: 'silent' }) }),
    );
  });
  afterAll(() => running.close());

  it('serves the fields with the policy of the key in the URL', async () => {
    lookup = async () => ({ allowedOrigins: [SHOP] });
    const res = await running.request('GET', `/fields/v1/card?key=${KEY}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain(`frame-ancestors ${SHOP}`);
    expect(res.headers['content-security-policy']).toContain(`script-src ${assets.scriptHash}`);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.toString()).toContain('<script>console.log("fields")</script>');
  });

  it('answers 503, never framed, when the key store fails', async () => {
    lookup = async () => {
      throw new Error('redis down');
    };
    const res = await running.request('GET', `/fields/v1/card?key=${KEY}`);
    expect(res.status).toBe(503);
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('does not look up a secret key put in a URL', async () => {
    lookup = jest.fn(async () => ({ allowedOrigins: [SHOP] }));
    const res = await running.request('GET', `/fields/v1/card?key=tsk_test_${'a'.repeat(38)}`);
    expect(res.status).toBe(400);
    expect(lookup).not.toHaveBeenCalled();
  });

  it('serves tessera.js to any page, without credentials, cacheable for a short while', async () => {
    const res = await running.request('GET', '/js/v1/tessera.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('public, max-age=300');
  });
});

describe('loadCardFieldsAssets', () => {
  it('refuses a fields script that would end its inline script element', () => {
    expect(() => loadCardFieldsAssets(assetsDir('var s = "</script>";'))).toThrow(/cannot be inlined/);
  });

  it('says to build when the scripts are missing', () => {
    expect(() => loadCardFieldsAssets(path.join(os.tmpdir(), 'no-such-dir'))).toThrow(/run npm run build/);
  });
});
