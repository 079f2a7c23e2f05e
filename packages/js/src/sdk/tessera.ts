/**
 * tessera.js: runs on the merchant's page. It frames the card fields (served from the fields
 * origin), talks to them over a private MessageChannel, and gives the page events and a token.
 * It never sees a card number or CVC: those stay inside the iframe, which the page cannot read.
 */
import {
  isOrigin,
  parseCvcSessionGrant,
  parseEvent,
  parseHello,
  PROTOCOL_VERSION,
  type ConnectMessage,
  type CvcResult,
  type CvcSessionGrant,
  type FieldsCommand,
  type TokenizeResult,
} from '../shared/protocol';
import { checkFieldsStyle } from '../shared/style';
import { startPageReports } from './pageReport';
import type {
  CardFields,
  CardFieldsEventMap,
  CardFieldsEventName,
  CardFieldsOptions,
  CvcField,
  FieldsFrame,
  TesseraInstance,
  TesseraOptions,
} from '../shared/api';

const PUBLISHABLE_KEY = /^tpk_(test|live)_[0-9A-Za-z]{38}$/;
const TOKENIZE_TIMEOUT_MS = 60_000;
const DEFAULT_TITLE = 'Secure card payment input frame';
const FIELDS_PATH = '/fields/v1/card';

/** The frame behind both the card fields and the CVC-only field: events, and one submission call. */
interface FieldsFrameWithSubmit extends FieldsFrame<FieldsFrameWithSubmit> {
  tokenize(): Promise<FrameResult>;
}

export class TesseraError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'TesseraError';
  }
}

// Read while the script runs: afterwards document.currentScript is another script or null.
const scriptOrigin = (() => {
  const script = document.currentScript as HTMLScriptElement | null;
  try {
    return script?.src ? new URL(script.src).origin : undefined;
  } catch {
    return undefined;
  }
})();

function randomNonce(): string {
  const bytes = new Uint8Array(18);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
}

function containerOf(container: string | Element): Element {
  const element = typeof container === 'string' ? document.querySelector(container) : container;
  if (!(element instanceof Element)) throw new TesseraError('container_not_found', `Tessera: no element matches ${String(container)}`);
  return element;
}

/** What a frame's submission resolves with: the card fields' tokenize result, or the CVC-only field's. */
type FrameResult = TokenizeResult | CvcResult;

/** The card fields, or with `cvcSession` the same frame showing the CVC input only (see CvcField). */
function mountCardFields(
  publishableKey: string,
  fieldsOrigin: string,
  options: CardFieldsOptions,
  cvcSession?: CvcSessionGrant,
): FieldsFrameWithSubmit {
  const style = checkFieldsStyle(options.style);
  if (!style.ok) throw new TesseraError('invalid_style', `Tessera: ${style.message}`);
  const container = containerOf(options.container);
  const nonce = randomNonce();
  const handlers: { [E in CardFieldsEventName]: Set<(payload: CardFieldsEventMap[E]) => void> } = {
    ready: new Set(),
    focus: new Set(),
    blur: new Set(),
    change: new Set(),
  };
  const pending = new Map<number, { resolve: (r: FrameResult) => void; reject: (e: TesseraError) => void; timer: number }>();
  /** The one success message this frame may send: a CVC-only frame never makes a token, the card fields never attach a CVC. */
  const success = cvcSession === undefined ? 'tokenized' : 'cvc_attached';
  let port: MessagePort | undefined;
  let ready = false;
  let nextId = 1;

  const iframe = document.createElement('iframe');
  // The key picks the frame-ancestors the server sends; the fragment never leaves the browser.
  const fragment = new URLSearchParams({ nonce, origin: location.origin });
  iframe.src = `${fieldsOrigin}${FIELDS_PATH}?${new URLSearchParams({ key: publishableKey })}#${fragment}`;
  iframe.title = options.title ?? DEFAULT_TITLE;
  iframe.setAttribute('frameborder', '0');
  iframe.setAttribute('scrolling', 'no');
  const height = cvcSession !== undefined ? 90 : options.holderName ? 230 : 160;
  iframe.style.cssText = `border:0;width:100%;display:block;overflow:hidden;height:${height}px;`;

  function emit<E extends CardFieldsEventName>(event: E, payload: CardFieldsEventMap[E]): void {
    for (const handler of handlers[event]) {
      try {
        handler(payload);
      } catch (err) {
        setTimeout(() => {
          throw err;
        });
      }
    }
  }

  function onEvent(event: MessageEvent): void {
    const message = parseEvent(event.data);
    if (message === undefined) return;
    switch (message.type) {
      case 'ready':
        ready = true;
        emit('ready', {});
        return;
      case 'focus':
      case 'blur':
        emit(message.type, { field: message.field });
        return;
      case 'change': {
        const { type: _type, ...payload } = message;
        emit('change', payload);
        return;
      }
      case 'resize':
        iframe.style.height = `${message.height}px`;
        return;
      case 'tokenized':
      case 'cvc_attached':
      case 'tokenize_failed': {
        const call = pending.get(message.id);
        if (call === undefined || (message.type !== 'tokenize_failed' && message.type !== success)) return;
        pending.delete(message.id);
        clearTimeout(call.timer);
        if (message.type !== 'tokenize_failed') call.resolve(message.result);
        else call.reject(new TesseraError(message.error.code, message.error.message));
        return;
      }
    }
  }

  /** The iframe's hello: from our iframe's window, from the fields origin, with our nonce. */
  function onHello(event: MessageEvent): void {
    if (event.source !== iframe.contentWindow || event.origin !== fieldsOrigin) return;
    const hello = parseHello(event.data);
    if (hello === undefined || hello.nonce !== nonce || iframe.contentWindow === null) return;
    window.removeEventListener('message', onHello);
    const channel = new MessageChannel();
    port = channel.port1;
    port.onmessage = onEvent;
    const connect: ConnectMessage = {
      type: 'tessera:connect',
      v: PROTOCOL_VERSION,
      nonce,
      style: style.ok ? style.style : {},
      holderName: options.holderName === true,
      ...(cvcSession === undefined ? {} : { cvcSession }),
    };
    iframe.contentWindow.postMessage(connect, fieldsOrigin, [channel.port2]);
  }

  const command = (message: FieldsCommand): void => port?.postMessage(message);

  window.addEventListener('message', onHello);
  container.appendChild(iframe);

  const fields: FieldsFrameWithSubmit = {
    on(event, handler) {
      handlers[event].add(handler);
      return fields;
    },
    off(event, handler) {
      handlers[event].delete(handler);
      return fields;
    },
    tokenize() {
      if (!ready || port === undefined) {
        return Promise.reject(new TesseraError('fields_not_ready', 'Tessera: the card fields have not loaded yet (wait for "ready").'));
      }
      const id = nextId++;
      return new Promise<FrameResult>((resolve, reject) => {
        const timer = window.setTimeout(() => {
          pending.delete(id);
          reject(new TesseraError('timeout', 'Tessera: the card fields did not answer in time.'));
        }, TOKENIZE_TIMEOUT_MS);
        pending.set(id, { resolve, reject, timer });
        command({ type: 'tokenize', id });
      });
    },
    focus() {
      command({ type: 'focus' });
    },
    clear() {
      command({ type: 'clear' });
    },
    destroy() {
      window.removeEventListener('message', onHello);
      port?.close();
      port = undefined;
      ready = false;
      for (const [id, call] of pending) {
        clearTimeout(call.timer);
        call.reject(new TesseraError('destroyed', 'Tessera: the card fields were removed.'));
        pending.delete(id);
      }
      iframe.remove();
    },
  };
  return fields;
}

/** What the page holds: the frame's methods, `on`/`off` chaining on the page's object, and its own submission call. */
function facadeOf<Self extends FieldsFrame<Self>>(frame: FieldsFrameWithSubmit, own: Omit<Self, keyof FieldsFrame<Self>>): Self {
  const self = {
    ...own,
    focus: frame.focus,
    clear: frame.clear,
    destroy: frame.destroy,
    on<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void) {
      frame.on(event, handler);
      return self;
    },
    off<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void) {
      frame.off(event, handler);
      return self;
    },
  } as unknown as Self;
  return self;
}

export function Tessera(publishableKey: string, options: TesseraOptions = {}): TesseraInstance {
  if (typeof publishableKey === 'string' && publishableKey.startsWith('tsk_')) {
    // Refused before anything is sent: a secret key in a web page must be revoked, not used.
    throw new TesseraError(
      'secret_key_in_browser',
      'Tessera: this is a secret key (tsk_…). Never put it in a web page: revoke it and use a publishable key (tpk_…).',
    );
  }
  if (typeof publishableKey !== 'string' || !PUBLISHABLE_KEY.test(publishableKey)) {
    throw new TesseraError('invalid_publishable_key', 'Tessera: pass a publishable key (tpk_test_… or tpk_live_…).');
  }
  const fieldsOrigin = options.fieldsOrigin ?? scriptOrigin;
  if (!isOrigin(fieldsOrigin)) {
    throw new TesseraError('fields_origin_unknown', 'Tessera: load tessera.js from the fields origin, or pass { fieldsOrigin }.');
  }
  if (options.pageReport !== false) startPageReports(publishableKey, fieldsOrigin); // SAQ A kit: the page's scripts, for the inventory.
  return {
    cardFields: (fieldsOptions) => {
      const frame = mountCardFields(publishableKey, fieldsOrigin, fieldsOptions);
      // The card fields' frame answers only 'tokenized' (see `success`).
      return facadeOf<CardFields>(frame, { tokenize: () => frame.tokenize() as Promise<TokenizeResult> });
    },
    cvcField: ({ cvcSession, ...fieldOptions }) => {
      const grant = parseCvcSessionGrant(cvcSession);
      if (grant === undefined) {
        throw new TesseraError(
          'cvc_session_required',
          'Tessera: cvcField needs a CVC session ({ token, secret }) your server opened with POST /v1/token/{token}/cvc-sessions.',
        );
      }
      const frame = mountCardFields(publishableKey, fieldsOrigin, fieldOptions, grant);
      // The CVC-only frame answers only 'cvc_attached' (see `success`).
      return facadeOf<CvcField>(frame, { submit: () => frame.tokenize() as Promise<CvcResult> });
    },
  };
}

(window as unknown as { Tessera: typeof Tessera }).Tessera = Tessera;
