/**
 * The card fields' appearance and languages in a real browser (Debian's chromium driven by
 * playwright-core): themes on light and dark merchant pages, German, French and Dutch, a phone-wide
 * viewport, hidden labels, a theme refused for its contrast (by tessera.js, and by the iframe when a
 * page skips tessera.js), and fonts: one served by the fields origin loads, one from anywhere else cannot.
 */
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { launchChromium, SCREENSHOTS, startMerchantSite, type MerchantSite } from './browser';
import { startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(180_000);

/** The page's globals, for functions evaluated inside the browser (tests compile without the DOM lib). */
declare const window: any;
declare const document: any;
declare const navigator: any;
declare const getComputedStyle: any;

const NIGHT_PAGE = '#1c1d26';

/** A merchant checkout: `Tessera(key, instance).cardFields({ container: '#card', ...fields })`, or the refusal it threw. */
interface Checkout {
  background?: string;
  color?: string;
  instance?: Record<string, unknown>;
  fields?: Record<string, unknown>;
}

const CHECKOUTS: Record<string, Checkout> = {
  light: {
    fields: { appearance: { theme: 'default', variables: { fontFamily: 'Inter, system-ui, sans-serif', colorPrimary: '#5b3cc4' } } },
  },
  dark: { background: NIGHT_PAGE, color: '#f2f3f7', fields: { appearance: { theme: 'night' } } },
  flat: { fields: { appearance: { theme: 'flat', variables: { fontFamily: '"Lora", Georgia, serif' } } } },
  de: { instance: { locale: 'de' }, fields: { holderName: true } },
  fr: { fields: { locale: 'fr', holderName: true, appearance: { theme: 'flat' } } },
  nl: { background: NIGHT_PAGE, color: '#f2f3f7', fields: { locale: 'nl', holderName: true, appearance: { theme: 'night' } } },
  auto: { fields: { locale: 'auto' } },
  phone: { fields: { holderName: true, appearance: { variables: { spacingUnit: '5px', borderRadius: '10px' } } } },
  text: {
    fields: {
      hideLabels: true,
      holderName: true,
      labels: { number: 'Kaart', expiry: 'Geldig tot', cvc: 'CVC-code' },
      placeholders: { number: 'Kaartnummer', expiry: 'MM/JJ', cvc: '123' },
    },
  },
  darkWithoutTheme: { background: NIGHT_PAGE, color: '#f2f3f7' },
  lightWithoutTheme: {},
  lowContrast: { background: NIGHT_PAGE, fields: { appearance: { variables: { colorBackground: NIGHT_PAGE, colorText: '#333333' } } } },
  foreignFont: { fields: { appearance: { variables: { fontFamily: 'url(https://fonts.example/evil.woff2)' } } } },
  remoteFontName: { fields: { appearance: { variables: { fontFamily: 'Poppins, sans-serif' } } } },
};

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let site: MerchantSite;
let fieldsOrigin = '';
let publishableKey = '';
let context: BrowserContext;

function checkoutPage(name: string): string {
  const checkout = CHECKOUTS[name];
  if (checkout === undefined) return bypassPage(name.replace(/^bypass-/, ''));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Checkout</title>
<style>body{font-family:system-ui,sans-serif;max-width:520px;margin:0 auto;padding:16px;background:${checkout.background ?? '#ffffff'};color:${checkout.color ?? '#1a1a1a'}}#card{margin:12px 0}</style>
</head><body><main>
<h1>Checkout</h1>
<div id="card"></div>
</main>
<script src="${fieldsOrigin}/js/v1/tessera.js"></script>
<script>
window.events = [];
try {
  var card = Tessera(${JSON.stringify(publishableKey)}, ${JSON.stringify(checkout.instance ?? {})}).cardFields(
    Object.assign({ container: '#card' }, ${JSON.stringify(checkout.fields ?? {})}));
  window.card = card;
  ['ready', 'change'].forEach(function (name) {
    card.on(name, function (e) { window.events.push(Object.assign({ type: name }, e)); });
  });
} catch (e) {
  window.refused = { code: e.code, message: e.message, frames: document.querySelectorAll('iframe').length };
}
</script>
</body></html>`;
}

/**
 * A page that frames the fields itself, without tessera.js, and sends a handshake with the
 * presentation named by `which`: the iframe must check it on its own.
 */
function bypassPage(which: string): string {
  const presentation =
    which === 'good'
      ? { appearance: { theme: 'night' } }
      : { appearance: { variables: { colorBackground: '#000000', colorText: '#222222' } } };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bypass</title></head><body><main><div id="card"></div></main>
<script>
window.received = [];
var nonce = 'abcdefghijklmnopqrstuvwx';
var iframe = document.createElement('iframe');
iframe.title = 'Card';
iframe.src = ${JSON.stringify(fieldsOrigin)} + '/fields/v1/card?key=${publishableKey}#nonce=' + nonce + '&origin=' + encodeURIComponent(location.origin);
window.addEventListener('message', function (e) {
  if (e.source !== iframe.contentWindow || !e.data || e.data.type !== 'tessera:hello') return;
  var channel = new MessageChannel();
  channel.port1.onmessage = function (m) { window.received.push(m.data.type); };
  iframe.contentWindow.postMessage({ type: 'tessera:connect', v: 1, nonce: nonce, style: {}, holderName: false,
    presentation: ${JSON.stringify(presentation)} }, ${JSON.stringify(fieldsOrigin)}, [channel.port2]);
  window.connected = true;
});
document.getElementById('card').appendChild(iframe);
</script></body></html>`;
}

async function open(name: string, on: BrowserContext = context): Promise<{ page: Page; frame: Frame; problems: string[] }> {
  const page = await on.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  await page.goto(`${site.origin}/${name}`);
  await page.waitForFunction(() => window.events.some((e: any) => e.type === 'ready'), undefined, { timeout: 30_000 });
  const frame = page.frames().find((f) => f.url().startsWith(`${fieldsOrigin}/fields/v1/card`));
  if (!frame) throw new Error('card fields frame not found');
  return { page, frame, problems };
}

/** The text of every label in the frame, in order. */
const labelsOf = (frame: Frame): Promise<string[]> =>
  frame.evaluate(() => [...document.querySelectorAll('label')].map((l: any) => l.textContent));

/** Types part of a card number and leaves the field, so its error shows (errors appear on blur). */
async function showIncompleteNumber(page: Page, frame: Frame): Promise<string> {
  await frame.locator('#cc-number').pressSequentially('4242');
  await frame.locator('#cc-exp').focus();
  await page.waitForFunction(() => [...window.events].reverse().find((e: any) => e.type === 'change')?.error !== undefined);
  return frame.locator('#cc-number-error').innerText();
}

async function axeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).include('#card').analyze();
  return results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** The iframe's height, settled (tessera.js sizes it from the form's resize events). */
async function settle(page: Page): Promise<void> {
  await page.waitForTimeout(300);
}

beforeAll(async () => {
  site = await startMerchantSite((url) => checkoutPage(url.slice(1).split('?')[0] ?? ''));
  redis = await startRedis();
  stack = await startStack(redis);
  fieldsOrigin = stack.fieldsUrl;
  publishableKey = stack.createPublishableKey('shop', [site.origin]).apiKey;
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 720, height: 720 }, locale: 'en-US' });
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await stack?.stop();
  await redis?.stop();
});

describe('themes', () => {
  it('light: the default theme with a served font; the label, input and error colours are the theme’s, axe finds nothing', async () => {
    const { page, frame, problems } = await open('light');
    expect(await showIncompleteNumber(page, frame)).toBe('Your card number is incomplete.');
    const look = await frame.evaluate(() => ({
      background: getComputedStyle(document.body).backgroundColor,
      label: getComputedStyle(document.querySelector('label')).color,
      error: getComputedStyle(document.getElementById('cc-number-error')).color,
      font: getComputedStyle(document.getElementById('cc-number')).fontFamily,
    }));
    expect(look).toEqual({
      background: 'rgb(255, 255, 255)',
      label: 'rgb(26, 26, 26)',
      error: 'rgb(176, 0, 32)',
      font: 'Inter, system-ui, sans-serif',
    });
    expect(await axeViolations(page)).toEqual([]);
    await settle(page);
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'fields-light.png') });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('dark: the night theme paints its background, light labels and a light error red (no more 1.3:1), axe finds nothing', async () => {
    const { page, frame, problems } = await open('dark');
    await showIncompleteNumber(page, frame);
    const look = await frame.evaluate(() => ({
      background: getComputedStyle(document.body).backgroundColor,
      label: getComputedStyle(document.querySelector('label')).color,
      input: getComputedStyle(document.getElementById('cc-number')).backgroundColor,
      error: getComputedStyle(document.getElementById('cc-number-error')).color,
    }));
    expect(look).toEqual({
      background: 'rgb(28, 29, 38)',
      label: 'rgb(242, 243, 247)',
      input: 'rgb(42, 44, 56)',
      error: 'rgb(255, 143, 159)',
    });
    expect(await axeViolations(page)).toEqual([]);
    await settle(page);
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'fields-dark.png') });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('flat: filled inputs, upper-case labels and the served serif; axe finds nothing', async () => {
    const { page, frame } = await open('flat');
    expect(await frame.evaluate(() => getComputedStyle(document.querySelector('label')).textTransform)).toBe('uppercase');
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });

  it('warns in the console when fields without a theme sit on a dark page, and stays quiet on a light one', async () => {
    const warnings = async (name: string): Promise<string[]> => {
      const page = await context.newPage();
      const seen: string[] = [];
      page.on('console', (msg) => {
        if (msg.type() === 'warning' && msg.text().startsWith('Tessera:')) seen.push(msg.text());
      });
      await page.goto(`${site.origin}/${name}`);
      await page.waitForFunction(() => window.events.some((e: any) => e.type === 'ready'), undefined, { timeout: 30_000 });
      await page.close();
      return seen;
    };
    expect(await warnings('darkWithoutTheme')).toEqual([
      expect.stringMatching(
        /^Tessera: on this page's background \(rgb\(28, 29, 38\)\) the card fields' built-in labels \(#333333\) 1\.32:1, .*theme: 'night'/,
      ),
    ]);
    expect(await warnings('lightWithoutTheme')).toEqual([]);
    expect(await warnings('dark')).toEqual([]);
  });

  it('refuses a theme whose labels fail WCAG AA, naming the pair and its ratio, and mounts nothing', async () => {
    const page = await context.newPage();
    await page.goto(`${site.origin}/lowContrast`);
    const refused = await page.evaluate(() => window.refused);
    expect(refused).toEqual({
      code: 'invalid_appearance',
      message:
        'Tessera: appearance: the label text (variables.colorText #333333) on the background (#1c1d26) has a contrast of 1.32:1; WCAG AA needs at least 4.5:1',
      frames: 0,
    });
    await page.close();
  });

  it('the iframe checks the handshake itself: a page that skips tessera.js gets no fields with a failing theme', async () => {
    const received = async (which: string): Promise<string[]> => {
      const page = await context.newPage();
      await page.goto(`${site.origin}/bypass-${which}`);
      await page.waitForFunction(() => window.connected === true, undefined, { timeout: 30_000 });
      await page.waitForTimeout(1_000);
      const types = await page.evaluate(() => window.received);
      await page.close();
      return types;
    };
    expect(await received('good')).toContain('ready');
    expect(await received('bad')).toEqual([]);
  });
});

describe('update()', () => {
  it('switches theme and language in place, the same options twice change nothing, and a failing theme is refused with the fields unchanged', async () => {
    const { page, frame, problems } = await open('light');
    await frame.locator('#cc-number').pressSequentially('4242');
    const look = (): Promise<unknown> =>
      frame.evaluate(() => ({
        lang: document.documentElement.lang,
        labels: [...document.querySelectorAll('label')].map((l: any) => l.textContent),
        background: getComputedStyle(document.body).backgroundColor,
        label: getComputedStyle(document.querySelector('label')).color,
        typed: document.getElementById('cc-number').value,
        root: document.documentElement.getAttribute('style'),
      }));
    const night = { locale: 'nl', appearance: { theme: 'night' } };
    await page.evaluate((options) => window.card.update(options), night);
    await frame.waitForFunction(() => document.documentElement.lang === 'nl');
    const first = await look();
    expect(first).toMatchObject({
      lang: 'nl',
      labels: ['Kaartnummer', 'Vervaldatum (MM / JJ)', 'Beveiligingscode', 'Naam op de kaart'],
      background: 'rgb(28, 29, 38)',
      label: 'rgb(242, 243, 247)',
      typed: '4242',
    });
    expect(await page.locator('#card iframe').getAttribute('title')).toBe('Beveiligd invoerveld voor kaartbetalingen');
    await page.evaluate((options) => window.card.update(options), night);
    await page.waitForTimeout(300);
    expect(await look()).toEqual(first);
    const refused = await page.evaluate(() => {
      try {
        window.card.update({ appearance: { theme: 'night', variables: { colorText: '#333333' } } });
        return undefined;
      } catch (e: any) {
        return e.code;
      }
    });
    expect(refused).toBe('invalid_appearance');
    await page.waitForTimeout(300);
    expect(await look()).toEqual(first);
    expect(await axeViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('locales', () => {
  const LOCALES: Record<string, { labels: string[]; error: string; lang: string }> = {
    de: {
      lang: 'de',
      labels: ['Kartennummer', 'Ablaufdatum (MM / JJ)', 'Sicherheitscode', 'Name auf der Karte'],
      error: 'Ihre Kartennummer ist unvollständig.',
    },
    fr: {
      lang: 'fr',
      labels: ['Numéro de carte', 'Date d’expiration (MM / AA)', 'Code de sécurité', 'Nom sur la carte'],
      error: 'Le numéro de votre carte est incomplet.',
    },
    nl: {
      lang: 'nl',
      labels: ['Kaartnummer', 'Vervaldatum (MM / JJ)', 'Beveiligingscode', 'Naam op de kaart'],
      error: 'Uw kaartnummer is onvolledig.',
    },
  };

  it.each(Object.keys(LOCALES))('%s: labels, placeholders, errors and <html lang> in the language; axe finds nothing', async (locale) => {
    const expected = LOCALES[locale]!;
    const { page, frame, problems } = await open(locale);
    expect(await labelsOf(frame)).toEqual(expected.labels);
    expect(await frame.evaluate(() => document.documentElement.lang)).toBe(expected.lang);
    expect(await frame.locator('#cc-exp').getAttribute('placeholder')).toBe(locale === 'fr' ? 'MM / AA' : 'MM / JJ');
    // The inputs are named by the translated labels (what a screen reader says).
    await expect(frame.getByLabel(expected.labels[0]!).count()).resolves.toBe(1);
    expect(await showIncompleteNumber(page, frame)).toBe(expected.error);
    expect(await axeViolations(page)).toEqual([]);
    await settle(page);
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, `fields-locale-${locale}.png`) });
    // tokenize() rejects with the message in the same language (the page may show it).
    const rejection = await page.evaluate(() => window.card.tokenize().then(null, (e: any) => ({ code: e.code, message: e.message })));
    expect(rejection).toEqual({ code: 'incomplete_number', message: expected.error });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('serves the fields page in the language tessera.js asks for, so the first paint is already translated', async () => {
    const html = await (await fetch(`${fieldsOrigin}/fields/v1/card?key=${publishableKey}&locale=nl`)).text();
    expect(html).toContain('<html lang="nl">');
    expect(html).toContain('<label for="cc-number">Kaartnummer</label>');
    const unknown = await (await fetch(`${fieldsOrigin}/fields/v1/card?key=${publishableKey}&locale=xx`)).text();
    expect(unknown).toContain('<html lang="en">');
    const page = await context.newPage();
    await page.goto(`${site.origin}/de`);
    expect(new URL((await page.locator('#card iframe').getAttribute('src')) ?? '').searchParams.get('locale')).toBe('de');
    await page.close();
  });

  it('auto: follows the shopper’s browser language, and the iframe’s title too', async () => {
    const french = await browser.newContext({ locale: 'fr-FR' });
    const { page, frame } = await open('auto', french);
    expect(await frame.evaluate(() => [navigator.language, document.documentElement.lang])).toEqual(['fr-FR', 'fr']);
    expect(await labelsOf(frame)).toContain('Numéro de carte');
    expect(await page.locator('#card iframe').getAttribute('title')).toBe('Champ sécurisé de saisie de carte de paiement');
    await french.close();
  });
});

describe('layout and text', () => {
  it('fits a 390 px phone screen: no horizontal scrolling, the inputs within the frame', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const { page, frame } = await open('phone', phone);
    const sizes = await frame.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      width: document.documentElement.clientWidth,
      right: Math.max(...[...document.querySelectorAll('input')].map((i: any) => i.getBoundingClientRect().right)),
    }));
    expect(sizes.scroll).toBe(sizes.width);
    expect(sizes.right).toBeLessThanOrEqual(sizes.width);
    expect(await axeViolations(page)).toEqual([]);
    await settle(page);
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'fields-390.png') });
    await phone.close();
  });

  it('hides labels from view but keeps them as the inputs’ accessible names, with the merchant’s own words', async () => {
    const { page, frame } = await open('text');
    // getByLabel finds inputs by their accessible name: the hidden labels still name them.
    await expect(frame.getByLabel('Kaart', { exact: true }).getAttribute('id')).resolves.toBe('cc-number');
    await expect(frame.getByLabel('Geldig tot').getAttribute('placeholder')).resolves.toBe('MM/JJ');
    const label = await frame.evaluate(() => {
      const el = document.querySelector('label[for="cc-number"]');
      const box = el.getBoundingClientRect();
      return { display: getComputedStyle(el).display, width: box.width, height: box.height, hidden: el.className };
    });
    expect(label).toEqual({ display: 'block', width: 1, height: 1, hidden: 'visually-hidden' });
    // The name input has no placeholder of its own: with its label hidden, the label shows there.
    expect(await frame.locator('#cc-name').getAttribute('placeholder')).toBe('Name on card');
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });
});

describe('fonts', () => {
  it('loads a font the fields origin serves (document.fonts), immutable and same-origin only', async () => {
    const { page, frame } = await open('light');
    const loaded = await frame.evaluate(async () => {
      await document.fonts.ready;
      return {
        check: document.fonts.check('16px Inter'),
        faces: [...document.fonts].filter((f: any) => f.family.replace(/"/g, '') === 'Inter' && f.status === 'loaded').length,
      };
    });
    expect(loaded.check).toBe(true);
    expect(loaded.faces).toBeGreaterThan(0);
    const fontUrl = await frame.evaluate(
      () => performance.getEntriesByType('resource').find((e: any) => e.name.endsWith('.woff2'))?.name as string | undefined,
    );
    expect(fontUrl).toMatch(new RegExp(`^${fieldsOrigin}/fields/v1/fonts/inter-[0-9.]+-latin-wght-normal\\.woff2$`));
    const res = await fetch(fontUrl!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('font/woff2');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    await page.close();
  });

  it('makes a font from any other origin impossible: refused by tessera.js, and blocked by the iframe’s CSP', async () => {
    for (const name of ['foreignFont', 'remoteFontName']) {
      const page = await context.newPage();
      await page.goto(`${site.origin}/${name}`);
      expect(await page.evaluate(() => window.refused?.code)).toBe('invalid_appearance');
      await page.close();
    }
    const csp = (await fetch(`${fieldsOrigin}/fields/v1/card?key=${publishableKey}`)).headers.get('content-security-policy') ?? '';
    expect(csp).toContain("font-src 'self'");
    // Even script inside the frame cannot load one: the browser enforces font-src.
    const { page, frame } = await open('light');
    const before = site.requests.length;
    const outcome = await frame.evaluate(async (url: string) => {
      try {
        await new (window as any).FontFace('Exfiltrate', `url(${url})`).load();
        return 'loaded';
      } catch {
        return 'blocked';
      }
    }, `${site.origin}/evil.woff2`);
    expect(outcome).toBe('blocked');
    expect(site.requests.slice(before)).not.toContain('/evil.woff2');
    await page.close();
  });
});
