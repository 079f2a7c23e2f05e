/**
 * A merchant's React checkout, as a front-end developer would write it with @tessera/react, for
 * reactFields.e2e.test.ts. The test bundles it with esbuild (React's development build, so StrictMode
 * runs every effect twice) and drives it through `window.harness`; everything the components report
 * lands in `window.events`.
 */
import { StrictMode, useEffect, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import {
  CardFields,
  CvcField,
  TesseraProvider,
  useTessera,
  type CardFieldsHandle,
  type CvcFieldHandle,
  type CvcSessionGrant,
  type FieldsEventProps,
} from '@tessera/react';
import type { FieldsStyle } from '@tessera/js';

interface PageConfig {
  view: 'card' | 'cvc';
  publishableKey: string;
  fieldsOrigin: string;
  integrity: string;
  cvcSession?: CvcSessionGrant;
  /** The card fields' first `style` (a test gives one tessera.js refuses). */
  initialStyle?: FieldsStyle;
}

interface Harness {
  tokenize(): Promise<unknown>;
  submitCvc(): Promise<unknown>;
  setCvcSession(session: CvcSessionGrant): void;
  cvcField(): unknown;
  setCardShown(shown: boolean): void;
  setTitle(title: string): void;
  setHolderName(holderName: boolean): void;
  rerender(): void;
  setStyle(style: FieldsStyle): void;
  cardFields(): unknown;
}

declare global {
  interface Window {
    tesseraPage: PageConfig;
    events: { type: string; [key: string]: unknown }[];
    harness: Partial<Harness>;
    providerSaw?: string;
    loadError?: string;
    /** How often React ran the checkout's mount effect: 2 under StrictMode's development checks. */
    strictEffectRuns: number;
  }
}

const record =
  (type: string) =>
  (payload: object): void => {
    window.events.push({ type, ...payload });
  };

/** The same handlers for both components: every event recorded, an error by its public fields only. */
const recordEvents: FieldsEventProps = {
  onReady: record('ready'),
  onChange: record('change'),
  onFocus: record('focus'),
  onBlur: record('blur'),
  onSubmit: record('submit'),
  onError: (e) => record('error')({ code: e.code, errorType: e.type, message: e.message }),
};

/** What useTessera() gives a component under the provider, once tessera.js has loaded. */
function ProviderProbe() {
  const tessera = useTessera();
  if (tessera !== null) window.providerSaw = typeof tessera.cardFields;
  return null;
}

const READABLE: FieldsStyle = { base: { fontSize: '16px', color: '#1a1a1a' } };

function CardCheckout({ initialStyle = READABLE }: { initialStyle?: FieldsStyle }) {
  const card = useRef<CardFieldsHandle>(null);
  const [shown, setShown] = useState(true);
  const [title, setTitle] = useState('Card details');
  const [holderName, setHolderName] = useState(false);
  const [style, setStyle] = useState(initialStyle);
  const [, setRenders] = useState(0);
  const [complete, setComplete] = useState(false);
  const [outcome, setOutcome] = useState('');
  useEffect(() => {
    window.strictEffectRuns += 1;
  }, []);
  Object.assign(window.harness, {
    tokenize: () => card.current!.tokenize(),
    setCardShown: setShown,
    setTitle,
    setHolderName,
    rerender: () => setRenders((n) => n + 1),
    setStyle,
    cardFields: () => card.current?.fields ?? null,
  });

  async function pay(): Promise<void> {
    try {
      const { card: summary } = await card.current!.tokenize();
      setOutcome(`Card ending ${summary.last4} saved`);
    } catch (e) {
      setOutcome(`Could not save the card (${(e as { code: string }).code})`);
    }
  }

  return (
    <>
      {shown && (
        <CardFields
          ref={card}
          id="card"
          options={{ title, holderName, style }}
          {...recordEvents}
          onChange={(e) => {
            setComplete(e.complete);
            recordEvents.onChange!(e);
          }}
        />
      )}
      <button type="button" id="pay" disabled={!complete} onClick={() => void pay()}>
        Save card
      </button>
      <p role="status">{outcome}</p>
    </>
  );
}

function CvcCheckout({ firstSession }: { firstSession: CvcSessionGrant }) {
  const field = useRef<CvcFieldHandle>(null);
  const [cvcSession, setCvcSession] = useState(firstSession);
  Object.assign(window.harness, {
    submitCvc: () => field.current!.submit(),
    setCvcSession,
    cvcField: () => field.current?.field ?? null,
  });
  return (
    <>
      <p>For your security, enter the card&apos;s security code again.</p>
      <CvcField ref={field} id="cvc" cvcSession={cvcSession} options={{ title: 'Security code' }} {...recordEvents} />
    </>
  );
}

function App({ config }: { config: PageConfig }) {
  return (
    <TesseraProvider
      publishableKey={config.publishableKey}
      fieldsOrigin={config.fieldsOrigin}
      integrity={config.integrity}
      onLoadError={(e) => (window.loadError = e.message)}
    >
      <main>
        <h1>{config.view === 'cvc' ? 'Pay with your Visa ending 4242' : 'Checkout'}</h1>
        <ProviderProbe />
        {config.view === 'cvc' ? <CvcCheckout firstSession={config.cvcSession!} /> : <CardCheckout initialStyle={config.initialStyle} />}
      </main>
    </TesseraProvider>
  );
}

window.events = [];
window.harness = {};
window.strictEffectRuns = 0;
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App config={window.tesseraPage} />
  </StrictMode>,
);
