import { createHash } from 'node:crypto';
import { describeScript, isExecutableScriptType, redactScriptUrl, sha256Base64, type ScriptElementFacts } from './pageReport';

const PAGE = { origin: 'https://shop.example', fieldsOrigin: 'https://fields.example' };
const script = (facts: Partial<ScriptElementFacts>): ScriptElementFacts => ({ src: '', integrity: '', type: '', text: '', ...facts });
const noFetch = async () => {
  throw new Error('must not fetch');
};

describe("tessera.js's page reporter (SAQ A kit)", () => {
  it('hashes inline scripts as CSP writes hashes, and skips data blocks such as JSON-LD', async () => {
    const text = 'console.log("hi")';
    const expected = createHash('sha256').update(text).digest('base64');
    expect(await describeScript(script({ text }), PAGE, noFetch, { fetches: 0 })).toEqual({ sha256: expected });
    expect(await sha256Base64(text)).toBe(expected);
    expect(isExecutableScriptType('module')).toBe(true);
    expect(await describeScript(script({ type: 'application/ld+json', text: '{}' }), PAGE, noFetch, { fetches: 0 })).toBeUndefined();
  });

  it('sends the integrity of an external script, hashes a same-origin one by fetching it, and leaves a cross-origin one unhashed', async () => {
    const budget = { fetches: 1 };
    expect(await describeScript(script({ src: 'https://cdn.example/a.js', integrity: ' sha384-abc ' }), PAGE, noFetch, budget)).toEqual({
      src: 'https://cdn.example/a.js',
      integrity: 'sha384-abc',
    });
    const body = new TextEncoder().encode('var x = 1;').buffer;
    const fetched = await describeScript(script({ src: 'https://shop.example/app.js' }), PAGE, async () => body as ArrayBuffer, budget);
    expect(fetched).toEqual({ src: 'https://shop.example/app.js', sha256: createHash('sha256').update('var x = 1;').digest('base64') });
    expect(budget.fetches).toBe(0);
    // The budget is spent: the next same-origin script is reported by URL alone.
    expect(await describeScript(script({ src: 'https://shop.example/b.js' }), PAGE, noFetch, budget)).toEqual({
      src: 'https://shop.example/b.js',
    });
    expect(await describeScript(script({ src: 'https://cdn.example/c.js' }), PAGE, noFetch, { fetches: 5 })).toEqual({
      src: 'https://cdn.example/c.js',
    });
  });

  it('sends no fragment and no value of a secret-looking query parameter', () => {
    expect(redactScriptUrl('https://cdn.example/a.js?v=2&apiKey=abc&session_id=s#x')).toBe(
      'https://cdn.example/a.js?v=2&apiKey=redacted&session_id=redacted',
    );
    expect(redactScriptUrl('not a url')).toBe('');
  });
});
