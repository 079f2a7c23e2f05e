import { backgroundBehind, builtInLookProblem } from './contrastHint';

describe('the built-in look on the merchant page', () => {
  it('finds the background through transparent ancestors, down to the canvas', () => {
    expect(backgroundBehind(['rgba(0, 0, 0, 0)', 'rgb(28, 29, 38)', 'rgb(255, 255, 255)'])).toEqual({ r: 28, g: 29, b: 38, a: 1 });
    expect(backgroundBehind(['rgba(0, 0, 0, 0)', 'rgba(0, 0, 0, 0)'])).toEqual({ r: 255, g: 255, b: 255, a: 1 });
    // Half-transparent black over white is mid grey.
    expect(backgroundBehind(['rgba(0, 0, 0, 0.5)'])).toEqual({ r: 127.5, g: 127.5, b: 127.5, a: 1 });
  });

  it('is readable on a light page', () => {
    expect(builtInLookProblem({ r: 255, g: 255, b: 255, a: 1 })).toBeUndefined();
    expect(builtInLookProblem({ r: 246, g: 247, b: 249, a: 1 })).toBeUndefined();
  });

  it('names what fails on a dark page, with its ratio and the fix', () => {
    expect(builtInLookProblem({ r: 28, g: 29, b: 38, a: 1 })).toBe(
      "Tessera: on this page's background (rgb(28, 29, 38)) the card fields' built-in labels (#333333) 1.32:1, error messages (#b00020) 2.28:1 fail WCAG AA (4.5:1). " +
        `Pass appearance: { theme: 'night' } or your own colours (docs/browser.md, "Appearance and locales").`,
    );
  });
});
