import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { loadTessera, type TesseraFactory } from '@tessera/js';
import type { TesseraInstance, TesseraOptions } from './sdk';
import { useLatest } from './useLatest';

export interface TesseraProviderProps {
  /** Your publishable key (`tpk_test_…` or `tpk_live_…`); it must allow this page's origin. */
  publishableKey: string;
  /** Your Tessera fields origin (FIELDS_ORIGIN): tessera.js and the card fields are loaded from there. */
  fieldsOrigin: string;
  /** The SRI hash of tessera.js published in docs/browser.md; the browser refuses any other script. */
  integrity?: string;
  /** Passed to `Tessera(publishableKey, options)`, e.g. `{ locale: 'de' }`. */
  options?: Omit<TesseraOptions, 'fieldsOrigin'>;
  /** tessera.js could not be loaded (network, SRI mismatch) or refused the key. */
  onLoadError?: (error: Error) => void;
  children?: ReactNode;
}

interface TesseraContextValue {
  tessera: TesseraInstance | null;
  loadError: Error | null;
}

const TesseraContext = createContext<TesseraContextValue | null>(null);
TesseraContext.displayName = 'TesseraContext';

/**
 * Loads tessera.js once (through `loadTessera` of `@tessera/js`) and gives the components below it
 * one `Tessera(publishableKey)` instance. Nothing renders differently while it loads: the fields
 * mount as soon as the instance exists.
 */
export function TesseraProvider({ publishableKey, fieldsOrigin, integrity, options, onLoadError, children }: TesseraProviderProps) {
  const [factory, setFactory] = useState<{ Tessera: TesseraFactory } | null>(null);
  const [loadError, setLoadError] = useState<Error | null>(null);
  const reportLoadError = useLatest(onLoadError);

  useEffect(() => {
    let current = true;
    loadTessera({ fieldsOrigin, integrity }).then(
      (Tessera) => {
        if (current) setFactory({ Tessera });
      },
      (error: Error) => {
        if (!current) return;
        setLoadError(error);
        reportLoadError.current?.(error);
      },
    );
    return () => {
      current = false;
    };
  }, [fieldsOrigin, integrity, reportLoadError]);

  // Options are compared by value: an inline `options={{ locale: 'de' }}` must not make a new instance each render.
  const optionsKey = JSON.stringify(options ?? {});
  const created = useMemo(() => {
    if (factory === null) return { tessera: null, error: null };
    try {
      const tessera = factory.Tessera(publishableKey, { ...(JSON.parse(optionsKey) as TesseraOptions), fieldsOrigin });
      return { tessera, error: null };
    } catch (error) {
      // Tessera() refuses a secret key or a malformed one at once, with a TesseraError.
      return { tessera: null, error: error as Error };
    }
  }, [factory, publishableKey, fieldsOrigin, optionsKey]);

  useEffect(() => {
    if (created.error !== null) reportLoadError.current?.(created.error);
  }, [created, reportLoadError]);

  const value = useMemo<TesseraContextValue>(
    () => ({ tessera: created.tessera, loadError: loadError ?? created.error }),
    [created, loadError],
  );
  return <TesseraContext.Provider value={value}>{children}</TesseraContext.Provider>;
}

function useTesseraContext(caller: string): TesseraContextValue {
  const context = useContext(TesseraContext);
  if (context === null) throw new Error(`${caller} must be used inside <TesseraProvider>.`);
  return context;
}

/** The `Tessera(publishableKey)` instance of the nearest provider; `null` while tessera.js loads or if it failed. */
export function useTessera(): TesseraInstance | null {
  return useTesseraContext('useTessera()').tessera;
}

/** Why tessera.js is not there: the load failed or the key was refused; `null` otherwise. */
export function useTesseraLoadError(): Error | null {
  return useTesseraContext('useTesseraLoadError()').loadError;
}

/** For the field components: the instance, and a clear message when they are placed outside a provider. */
export function useTesseraFor(component: string): TesseraInstance | null {
  return useTesseraContext(`<${component}>`).tessera;
}
