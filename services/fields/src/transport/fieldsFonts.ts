import fs from 'node:fs';

/**
 * The fonts a merchant may pick for the card fields (appearance.variables.fontFamily, SERVED_FONTS
 * in packages/js shared/appearance.ts), served by the fields origin itself: the fields page's CSP
 * allows fonts from 'self' only, because a font from anywhere else can learn what the shopper
 * types (a face per character through unicode-range, each fetched when first drawn).
 *
 * Variable woff2 files (one per family and subset, every weight) from Fontsource's npm packages,
 * under the SIL Open Font License 1.1, which is served beside them.
 */
export const FONTS_PATH = '/fields/v1/fonts';

/** Fontsource's latin and latin-ext ranges: every character of the languages the fields speak. */
const LATIN =
  'U+0000-00FF,U+0131,U+0152-0153,U+02BB-02BC,U+02C6,U+02DA,U+02DC,U+0304,U+0308,U+0329,U+2000-206F,U+20AC,U+2122,U+2191,U+2193,U+2212,U+2215,U+FEFF,U+FFFD';
const LATIN_EXT =
  'U+0100-02BA,U+02BD-02C5,U+02C7-02CC,U+02CE-02D7,U+02DD-02FF,U+0304,U+0308,U+0329,U+1D00-1DBF,U+1E00-1E9F,U+1EF2-1EFF,U+2020,U+20A0-20AB,U+20AD-20C0,U+2113,U+2C60-2C7F,U+A720-A7FF';

interface ServedFamily {
  family: string;
  /** The npm package the files come from. */
  pkg: string;
  /** Its file prefix: `<prefix>-latin-wght-normal.woff2`. */
  prefix: string;
  weights: string;
}

const FAMILIES: readonly ServedFamily[] = [
  { family: 'Inter', pkg: '@fontsource-variable/inter', prefix: 'inter', weights: '100 900' },
  { family: 'Lora', pkg: '@fontsource-variable/lora', prefix: 'lora', weights: '400 700' },
];

/**
 * The served name of a package's file: its version in the name, so the files can be cached for a
 * year as immutable and a new version of the package is a new URL.
 */
function servedName({ pkg, prefix }: ServedFamily, rest: string): string {
  const { version } = JSON.parse(fs.readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string };
  return `${prefix}-${version}-${rest}`;
}

const SUBSETS = [
  { name: 'latin-ext', range: LATIN_EXT },
  { name: 'latin', range: LATIN },
] as const;

/**
 * The @font-face rules of the fields page's style. A face is only fetched when text set in it is
 * drawn, so a merchant who picks no served font costs the shopper nothing.
 */
export const FONT_FACES_CSS = FAMILIES.flatMap((served) =>
  SUBSETS.map(
    ({ name, range }) =>
      `@font-face{font-family:"${served.family}";font-style:normal;font-display:swap;font-weight:${served.weights};` +
      `src:url(${FONTS_PATH}/${servedName(served, `${name}-wght-normal.woff2`)}) format("woff2");unicode-range:${range}}`,
  ),
).join('\n');

export interface FontFile {
  contentType: string;
  body: Buffer;
}

/** Every file under FONTS_PATH, by name, read once at start-up (a missing package fails the start, not a shopper). */
export function loadFieldsFonts(): Map<string, FontFile> {
  const files = new Map<string, FontFile>();
  for (const served of FAMILIES) {
    for (const { name } of SUBSETS) {
      const file = `${name}-wght-normal.woff2`;
      files.set(servedName(served, file), {
        contentType: 'font/woff2',
        body: fs.readFileSync(require.resolve(`${served.pkg}/files/${served.prefix}-${file}`)),
      });
    }
    files.set(servedName(served, 'LICENSE.txt'), {
      contentType: 'text/plain; charset=utf-8',
      body: fs.readFileSync(require.resolve(`${served.pkg}/LICENSE`)),
    });
  }
  return files;
}
