import { FONT_FACES_CSS, FONTS_PATH, loadFieldsFonts } from './fieldsFonts';

describe('served fonts', () => {
  const files = loadFieldsFonts();

  it('serves every file the @font-face rules name, and only from this origin’s font path', () => {
    const urls = [...FONT_FACES_CSS.matchAll(/url\(([^)]*)\)/g)].map((m) => m[1] ?? '');
    expect(urls.length).toBe(4);
    for (const url of urls) {
      expect(url.startsWith(`${FONTS_PATH}/`)).toBe(true);
      const file = files.get(url.slice(FONTS_PATH.length + 1));
      expect(file?.contentType).toBe('font/woff2');
      // A woff2 file starts with its signature.
      expect(file?.body.subarray(0, 4).toString('latin1')).toBe('wOF2');
    }
  });

  it('declares the families the appearance check allows, each with its version in the file name', () => {
    expect(FONT_FACES_CSS).toContain('font-family:"Inter"');
    expect(FONT_FACES_CSS).toContain('font-family:"Lora"');
    expect(FONT_FACES_CSS).toMatch(/inter-\d+\.\d+\.\d+-latin-wght-normal\.woff2/);
  });

  it('serves each font’s SIL Open Font License beside it', () => {
    const licenses = [...files.entries()].filter(([name]) => name.endsWith('LICENSE.txt'));
    expect(licenses).toHaveLength(2);
    for (const [, license] of licenses) expect(license.body.toString('utf8')).toContain('SIL Open Font License');
  });
});
