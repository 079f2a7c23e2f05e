import { runKeysCli } from './keys';

async function run(argv: string[], env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runKeysCli(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('npm run keys -- page-policy (SAQ A kit)', () => {
  it('prints the payment-page headers and the tessera.js line for the fields origin, without Redis', async () => {
    const key = `tpk_test_${'a'.repeat(38)}`;
    const res = await run(['page-policy', '--merchant', 'dev', '--mode', 'test', '--key', key], {
      FIELDS_ORIGIN: 'https://fields.example',
    });
    expect(res.code).toBe(0);
    const text = res.out.join('\n');
    expect(text).toContain("Content-Security-Policy: default-src 'self'; script-src 'nonce-{NONCE}' https://fields.example;");
    expect(text).toContain(`Reporting-Endpoints: tessera-csp="https://fields.example/v1/browser/csp-reports?key=${key}"`);
    expect(text).toMatch(
      /<script src="https:\/\/fields\.example\/js\/v1\/tessera\.js" integrity="sha384-[^"]+" crossorigin="anonymous" nonce="\{NONCE\}"><\/script>/,
    );
    const json = await run(['page-policy', '--merchant', 'dev', '--mode', 'live', '--fields-origin', 'https://f.example', '--json'], {});
    expect(JSON.parse(json.out[0]!)).toMatchObject({ merchantId: 'dev', mode: 'live', fieldsOrigin: 'https://f.example' });
  });

  it('exits 2 without a fields origin, with a key of the other mode, or without --mode', async () => {
    expect((await run(['page-policy', '--merchant', 'dev', '--mode', 'test'], {})).err.join('')).toMatch(/--fields-origin/);
    const wrongKey = await run(['page-policy', '--merchant', 'dev', '--mode', 'live', '--key', `tpk_test_${'a'.repeat(38)}`], {
      FIELDS_ORIGIN: 'https://f.example',
    });
    expect(wrongKey.code).toBe(2);
    expect((await run(['page-policy', '--merchant', 'dev'], { FIELDS_ORIGIN: 'https://f.example' })).code).toBe(2);
  });
});
