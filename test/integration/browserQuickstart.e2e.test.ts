/**
 * docs/browser.md's "Five minutes" how-to, followed as written: its key command through the real
 * keys CLI, its page and its server saved to files of a fresh folder as the reader would, the server
 * run with node, and Debian's chromium paying on the page. The only rewrites are the ones a reader's
 * machine would not need: the default ports (8080, 8082, 8090, 3000) become free ones, and the
 * `tpk_test_…` of the page becomes the key the command printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { collectPageProblems, launchChromium, SCREENSHOTS } from './browser';
import {
  findCardDataInLogs,
  freePort,
  ManagedProcess,
  ROOT,
  startRedis,
  startSandboxPsp,
  startStack,
  TEST_CARDS,
  type RedisServer,
  type Stack,
} from './harness';

jest.setTimeout(180_000);

interface HowTo {
  keyCommand: string;
  page: string;
  server: string;
}

/** The how-to's blocks: one `sh` line that makes the key, the `html` page, the `js` server. */
export function extractHowTo(markdown: string): HowTo {
  const section = /^## Five minutes[^\n]*\n([\s\S]*?)(?=^## )/m.exec(markdown)?.[1];
  if (section === undefined) throw new Error('docs/browser.md has no "## Five minutes" section');
  const block = (lang: string): string => {
    const found = [...section.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map((m) => m[1]!);
    if (found.length !== 1) throw new Error(`the how-to needs exactly one ${lang} block, has ${found.length}`);
    return found[0]!;
  };
  const keyCommand = block('sh').trim();
  if (!/^npm run keys -- create --kind publishable /.test(keyCommand) || keyCommand.includes('\n')) {
    throw new Error(`the how-to's sh block should be one "npm run keys -- create --kind publishable" line: ${keyCommand}`);
  }
  return { keyCommand, page: block('html'), server: block('js') };
}

const howTo = extractHowTo(fs.readFileSync(path.join(ROOT, 'docs', 'browser.md'), 'utf8'));
const CVC = '046';
const EXPIRY_TYPED = `12${String(new Date().getUTCFullYear() + 3).slice(2)}`;

let redis: RedisServer;
let stack: Stack;
let sandbox: ManagedProcess;
let server: ChildProcess | undefined;
let serverOutput = '';
let browser: Browser;
let folder = '';
let pageOrigin = '';

/** `npm run keys -- a b c` as the keys CLI's arguments (the words of the line; the how-to quotes none). */
function cliArguments(command: string): string[] {
  return command.replace(/^npm run keys -- /, '').split(/\s+/);
}

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis);
  const psp = await startSandboxPsp();
  sandbox = psp.sandbox;
  const pagePort = await freePort();
  pageOrigin = `http://127.0.0.1:${pagePort}`;
  const ports = (text: string): string =>
    text
      .replaceAll('http://127.0.0.1:8080', stack.baseUrl)
      .replaceAll('http://127.0.0.1:8082', stack.fieldsUrl)
      .replaceAll('http://127.0.0.1:8090', new URL(psp.chargesUrl).origin)
      .replaceAll('http://127.0.0.1:3000', pageOrigin)
      .replace(/\.listen\(3000,/, `.listen(${pagePort},`);

  // Step 1, the command's own arguments, through the keys CLI on this stack (README's quick start runs the line itself beside npm start).
  const printed = stack.cli(cliArguments(ports(howTo.keyCommand)));
  const publishableKey = /tpk_test_[0-9A-Za-z]{38}/.exec(printed)?.[0];
  if (publishableKey === undefined) throw new Error(`the key command printed no key: ${printed}`);

  // Steps 2 and 3, saved as the reader saves them, in a folder whose node_modules is this checkout's.
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-howto-'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(folder, 'node_modules'));
  fs.mkdirSync(path.join(folder, '.tessera'));
  // What npm start writes: the test secret key of merchant `dev`.
  fs.writeFileSync(path.join(folder, '.tessera', 'dev-api-key'), `${stack.createKey('dev', 'test').apiKey}\n`);
  if (!howTo.page.includes("Tessera('tpk_test_…')")) throw new Error("the page should say Tessera('tpk_test_…') for the reader's key");
  fs.writeFileSync(path.join(folder, 'checkout.html'), ports(howTo.page).replace("Tessera('tpk_test_…')", `Tessera('${publishableKey}')`));
  fs.writeFileSync(path.join(folder, 'checkout.mjs'), ports(howTo.server));

  // Step 4: node checkout.mjs.
  server = spawn(process.execPath, ['checkout.mjs'], { cwd: folder, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.on('data', (chunk: Buffer) => (serverOutput += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (serverOutput += chunk.toString()));
  const deadline = Date.now() + 15_000;
  while (!serverOutput.includes(`checkout at ${pageOrigin}`)) {
    if (Date.now() > deadline || server.exitCode !== null) throw new Error(`checkout.mjs did not start: ${serverOutput}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  server?.kill();
  await sandbox?.stop();
  await stack?.stop();
  await redis?.stop();
  if (folder !== '') fs.rmSync(folder, { recursive: true, force: true });
});

async function payWith(number: string, screenshot?: string): Promise<{ outcome: string; problems: string[] }> {
  const page = await browser.newPage();
  // The browser's own favicon request gets the server's 404; every other failed response is a problem.
  const problems = collectPageProblems(page, /status of 404/);
  page.on('response', (response) => {
    if (response.status() >= 400 && new URL(response.url()).pathname !== '/favicon.ico')
      problems.push(`${response.status()} ${response.url()}`);
  });
  page.on('console', (msg) => {
    if (/Content Security Policy|Refused/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  await page.goto(pageOrigin);
  const frame = page.frameLocator('#card iframe');
  await frame.getByLabel('Card number').pressSequentially(number);
  await frame.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
  await frame.getByLabel('Security code').pressSequentially(CVC);
  await page.getByRole('button', { name: 'Pay 19.99 EUR' }).click();
  const outcome = page.locator('#outcome');
  await outcome.filter({ hasText: /Paid|Declined|failed/ }).waitFor({ timeout: 30_000 });
  if (screenshot !== undefined) await page.screenshot({ path: path.join(SCREENSHOTS, screenshot) });
  const text = (await outcome.textContent()) ?? '';
  await page.close();
  return { outcome: text, problems };
}

describe("docs/browser.md's five-minute how-to, followed as written", () => {
  it('charges the success test card: the page says Paid with the charge id, and nothing on the page was refused by its CSP', async () => {
    const { outcome, problems } = await payWith(TEST_CARDS.visa, 'howto-paid.png');
    expect(outcome).toMatch(/^Paid \(ch_\w+\)\.$/);
    expect(problems).toEqual([]);
  });

  it('shows the decline of the declined test card', async () => {
    const { outcome } = await payWith(TEST_CARDS.visaDeclined);
    expect(outcome).toBe('Declined: generic_decline.');
  });

  it("leaves no card number or CVC in the how-to server's output, the services' logs or the sandbox's", () => {
    const logs = [stack.logs(), sandbox.output, serverOutput].join('\n');
    expect(findCardDataInLogs(logs, [TEST_CARDS.visa, TEST_CARDS.visaDeclined], [CVC])).toEqual([]);
  });
});
